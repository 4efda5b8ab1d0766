//! The liquid's particle/grid transfer, FLIP (the PIC/FLIP blend) or APIC, chosen per scene
//! and switchable while the simulation runs. The transfers themselves are the stages
//! [`super::p2g`] and [`super::g2p`]; this module holds the choice and APIC's per-particle
//! affine matrices (`Particles::affine`).

use super::{g2p::G2p, p2g::P2g};
use crate::scene::TransferKind;
use crate::sim::{
    check_limits,
    core::params::{TRANSFER_APIC, TRANSFER_FLIP},
};
use crate::sim::{SimError, Simulation};

/// The `SimParams::transfer` value of `kind`.
pub fn param(kind: TransferKind) -> u32 {
    match kind {
        TransferKind::Flip => TRANSFER_FLIP,
        TransferKind::Apic => TRANSFER_APIC,
    }
}

impl Simulation {
    /// Keeps each particle's FLIP change of the last G2P (`Particles::flip_delta`) from the
    /// next substep on, for the viewer's particle colours; a headless run saves the 16
    /// bytes per particle.
    pub fn ensure_flip_delta(&mut self) {
        let (core, mode) = (&self.core, &mut self.mode);
        let device = &core.ctx.device;
        if mode.particles.ensure_flip_delta(device) {
            // The stages' bind groups still hold the placeholder.
            mode.g2p = G2p::new(device, &core.fields, &mode.particles);
            if let Some(flow) = mode.flow.as_mut() {
                flow.rebind(device, &core.fields, &mode.particles);
            }
        }
    }

    pub fn transfer(&self) -> TransferKind {
        self.scene.transfer
    }

    /// Switches the transfer from the next substep on. The affine matrices are allocated on
    /// the first switch to APIC (after the adapter's limits are checked) and zeroed on every
    /// switch to it: matrices left from an earlier APIC stretch no longer describe the
    /// particles' velocities, and a zero matrix makes the first APIC transfer a PIC one.
    pub fn set_transfer(&mut self, kind: TransferKind) -> Result<(), SimError> {
        if kind == self.scene.transfer {
            return Ok(());
        }
        if kind == TransferKind::Apic {
            let mut scene = self.scene.clone();
            scene.transfer = kind;
            let (core, mode) = (&self.core, &mut self.mode);
            check_limits(&core.ctx, &scene, mode.particles.capacity as u64)?;
            let device = &core.ctx.device;
            if mode.particles.ensure_affine(device) {
                // The stages' bind groups still hold the placeholder.
                mode.p2g = P2g::new(device, &core.fields, &mode.particles);
                mode.g2p = G2p::new(device, &core.fields, &mode.particles);
                if let Some(flow) = mode.flow.as_mut() {
                    flow.rebind(device, &core.fields, &mode.particles);
                }
            }
            let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Simulation::set_transfer"),
            });
            enc.clear_buffer(&mode.particles.affine, 0, None);
            core.ctx.submit(enc.finish());
        }
        self.scene.transfer = kind;
        self.fields.params.transfer = param(kind);
        Ok(())
    }

    /// Replaces the APIC affine matrices: three rows (c_u, c_v, c_w; w unused) per
    /// particle, 1/s. Tests use it to run the transfers on arbitrary matrices.
    pub fn upload_affine(&mut self, rows: &[[f32; 4]]) -> Result<(), SimError> {
        let expected = 3 * self.mode.particles.count as usize;
        if self.scene.transfer != TransferKind::Apic || rows.len() != expected {
            return Err(SimError::Unsupported(format!(
                "upload_affine: needs transfer apic and {expected} rows; the scene has transfer {} \
                 and {} rows were given",
                self.scene.transfer,
                rows.len()
            )));
        }
        if !rows.is_empty() {
            self.ctx
                .queue
                .write_buffer(&self.mode.particles.affine, 0, bytemuck::cast_slice(rows));
        }
        Ok(())
    }

    /// The APIC affine matrices, three rows per particle (empty unless the transfer is APIC).
    pub fn read_affine(&self) -> Result<Vec<[f32; 4]>, SimError> {
        if self.scene.transfer != TransferKind::Apic || self.mode.particles.count == 0 {
            return Ok(vec![]);
        }
        let mut rows: Vec<[f32; 4]> =
            crate::gpu::read_buffer(&self.ctx, &self.mode.particles.affine)?;
        rows.truncate(3 * self.mode.particles.count as usize);
        Ok(rows)
    }
}
