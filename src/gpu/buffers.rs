//! Buffer creation and blocking readback.

use super::{GpuContext, GpuError};
use wgpu::util::DeviceExt;

/// A storage buffer of `size` bytes that can also be copied from and to (for readback,
/// clears and debug views). Zero-initialised by wgpu.
pub fn storage_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A uniform buffer initialised with `contents`.
pub fn uniform_buffer(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    })
}

/// Copies `buffer` to a staging buffer and blocks until its contents are on the host.
pub fn read_buffer<T: bytemuck::Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
) -> Result<Vec<T>, GpuError> {
    let mut reader = BufferReader::new(&ctx.device, buffer.size(), "readback");
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("readback"),
        });
    reader.copy_from(&mut encoder, buffer);
    ctx.submit(encoder.finish());
    reader.read(ctx)
}

/// A reusable staging buffer: record a copy into it, submit, then `read`.
pub struct BufferReader {
    staging: wgpu::Buffer,
    len: u64,
}

impl BufferReader {
    pub fn new(device: &wgpu::Device, size: u64, label: &str) -> Self {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self { staging, len: 0 }
    }

    /// Records a copy of the first `min(src.size, staging.size)` bytes of `src`.
    pub fn copy_from(&mut self, encoder: &mut wgpu::CommandEncoder, src: &wgpu::Buffer) {
        self.copy_range(encoder, src, 0, src.size().min(self.staging.size()));
    }

    pub fn copy_range(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        offset: u64,
        len: u64,
    ) {
        encoder.copy_buffer_to_buffer(src, offset, &self.staging, 0, len);
        self.len = len;
    }

    /// Records a copy of the first `len` bytes of `src` to `dst_offset` in the staging
    /// buffer, after what earlier copies put there (one read then brings several buffers
    /// back). Offsets and lengths are multiples of 4.
    pub fn copy_at(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) {
        encoder.copy_buffer_to_buffer(src, 0, &self.staging, dst_offset, len);
        self.len = self.len.max(dst_offset + len);
    }

    /// Maps the staging buffer (waiting for the GPU) and returns its contents.
    pub fn read<T: bytemuck::Pod>(&self, ctx: &GpuContext) -> Result<Vec<T>, GpuError> {
        let slice = self.staging.slice(..self.len);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        ctx.wait()?;
        rx.recv()
            .map_err(|e| GpuError::Readback(e.to_string()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let data = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            bytemuck::cast_slice::<u8, T>(&view).to_vec()
        };
        self.staging.unmap();
        if std::env::var_os("EDDY_TRACE_READS").is_some() {
            eprintln!(
                "read {} bytes:\n{}",
                self.len,
                std::backtrace::Backtrace::force_capture()
            );
        }
        super::traffic::count(|t| {
            t.reads += 1;
            t.bytes_read += self.len;
        });
        Ok(data)
    }
}
