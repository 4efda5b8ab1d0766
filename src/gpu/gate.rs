//! Dispatches gated on the GPU: a substep recorded before the host knows whether its frame
//! still needs it runs, or does nothing, as the GPU's clock decided
//! (`crate::sim::core::clock`).
//!
//! While a [`Gate`] is entered on a thread ([`Gate::enter`]), every dispatch that thread
//! records through [`crate::gpu::Kernel`] becomes indirect: its workgroup counts are
//! registered in the gate's table, once per distinct size, and read from the gate's live
//! arguments. Every command buffer submitted meanwhile ([`crate::gpu::GpuContext::submit`])
//! is preceded by the table's new sizes (a queue write) and by gate.wgsl, which copies the
//! table into the live arguments when the clock's `CLOCK_RUN` word is 1 and zeros them when
//! it is 0. A substep whose frame had ended thus dispatches nothing. Copies and clears are
//! not gated; what a gated substep copies or clears is either rewritten before it is read
//! or unchanged by the substeps that did not run (the runner's comments say which).

use super::constants::GATE_CAPACITY;
use super::{storage_buffer, GpuContext, Kernel};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

crate::kernel_entries!(
    /// The entry points of gate.wgsl.
    GateEntries { apply }
);

/// The sizes registered so far and how many of them the table on the GPU holds.
#[derive(Default)]
struct Sizes {
    groups: Vec<[u32; 2]>,
    written: usize,
}

pub struct Gate {
    kernel: Kernel,
    e: GateEntries,
    group: wgpu::BindGroup,
    /// `[count, x0, y0, z0, x1, ...]`, written by the host.
    table: wgpu::Buffer,
    /// The indirect arguments: three words per size.
    live: wgpu::Buffer,
    sizes: Mutex<Sizes>,
}

thread_local! {
    /// The gate entered on this thread, if any.
    static ACTIVE: RefCell<Option<Arc<Gate>>> = const { RefCell::new(None) };
}

/// Leaves the gate when dropped.
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        ACTIVE.with(|a| *a.borrow_mut() = None);
    }
}

impl Gate {
    /// A gate driven by the clock words in `clock` (`CLOCK_RUN`).
    pub fn new(device: &wgpu::Device, clock: &wgpu::Buffer) -> Arc<Self> {
        let kernel = Kernel::new(device, crate::wgsl!("gate.wgsl"), "Gate");
        let table = storage_buffer(device, "Gate::table", (1 + 3 * GATE_CAPACITY as u64) * 4);
        let live = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Gate::live"),
            size: 3 * GATE_CAPACITY as u64 * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
            mapped_at_creation: false,
        });
        let group = kernel.bind(
            device,
            &[("clock", clock), ("table", &table), ("live", &live)],
        );
        Arc::new(Self {
            e: GateEntries::of(&kernel),
            kernel,
            group,
            table,
            live,
            sizes: Mutex::new(Sizes::default()),
        })
    }

    /// Gates this thread's dispatches and submissions until the guard is dropped. A table
    /// more than half full starts again empty (sizes that stopped being used, e.g. after a
    /// preconditioner changed, would otherwise pile up): the work already submitted read
    /// the table as it was, since queue writes land in submission order.
    pub fn enter(self: &Arc<Self>) -> Entered {
        {
            let mut s = self.sizes.lock().unwrap();
            if s.groups.len() > GATE_CAPACITY / 2 {
                *s = Sizes::default();
            }
        }
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            assert!(a.is_none(), "a gate is already entered on this thread");
            *a = Some(self.clone());
        });
        Entered(())
    }

    /// Distinct dispatch sizes registered so far.
    pub fn sizes(&self) -> usize {
        self.sizes.lock().unwrap().groups.len()
    }

    /// The byte offset of the live arguments for `x` by `y` workgroups, registering the size.
    fn slot(&self, x: u32, y: u32) -> u64 {
        let mut s = self.sizes.lock().unwrap();
        let i = match s.groups.iter().position(|g| *g == [x, y]) {
            Some(i) => i,
            None => {
                assert!(
                    s.groups.len() < GATE_CAPACITY,
                    "a gated substep uses more than {GATE_CAPACITY} dispatch sizes"
                );
                s.groups.push([x, y]);
                s.groups.len() - 1
            }
        };
        i as u64 * 12
    }

    /// Before a gated command buffer: the table's new sizes and the commands that set the
    /// live arguments from it.
    fn prologue(&self, ctx: &GpuContext) -> wgpu::CommandBuffer {
        {
            let mut s = self.sizes.lock().unwrap();
            let n = s.groups.len();
            if s.written < n {
                let from = s.written;
                let words: Vec<u32> = s.groups[from..]
                    .iter()
                    .flat_map(|&[x, y]| [x, y, 1])
                    .collect();
                let at = (1 + 3 * from as u64) * 4;
                ctx.queue
                    .write_buffer(&self.table, at, bytemuck::cast_slice(&words));
                ctx.queue
                    .write_buffer(&self.table, 0, bytemuck::bytes_of(&(n as u32)));
                s.written = n;
            }
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Gate::apply"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("gate"),
                timestamp_writes: None,
            });
            pass.set_pipeline(self.kernel.pipeline(self.e.apply));
            pass.set_bind_group(0, &self.group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        super::traffic::count(|t| t.dispatches += 1);
        enc.finish()
    }
}

/// Records a dispatch of `x` by `y` workgroups through the gate entered on this thread;
/// false (nothing recorded) when none is.
pub(super) fn dispatch(pass: &mut wgpu::ComputePass<'_>, x: u32, y: u32) -> bool {
    ACTIVE.with(|a| match a.borrow().as_ref() {
        Some(gate) => {
            let at = gate.slot(x, y);
            pass.dispatch_workgroups_indirect(&gate.live, at);
            true
        }
        None => false,
    })
}

/// The command buffer that must precede one submitted while a gate is entered.
pub(super) fn prologue(ctx: &GpuContext) -> Option<wgpu::CommandBuffer> {
    let gate = ACTIVE.with(|a| a.borrow().clone())?;
    Some(gate.prologue(ctx))
}
