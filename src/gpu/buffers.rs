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

/// A uniform buffer initialised with `contents` (copied to by the GPU too, and from for
/// tests).
pub fn uniform_buffer(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents,
        usage: wgpu::BufferUsages::UNIFORM
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
    })
}

/// Copies `buffer` to a staging buffer and blocks until its contents are on the host.
pub fn read_buffer<T: bytemuck::Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
) -> Result<Vec<T>, GpuError> {
    read_buffer_range(ctx, buffer, 0, buffer.size())
}

/// As [`read_buffer`], for `len` bytes from byte `offset` of `buffer` (both multiples of 4).
pub fn read_buffer_range<T: bytemuck::Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    offset: u64,
    len: u64,
) -> Result<Vec<T>, GpuError> {
    let mut reader = BufferReader::new(&ctx.device, len, "readback");
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("readback"),
        });
    reader.copy_range(&mut encoder, buffer, offset, len);
    ctx.submit(encoder.finish());
    reader.read(ctx)
}

/// Where wgpu lets a storage binding start: every adapter's alignment divides 256 bytes.
pub const REGION_ALIGN: u64 = 256;

/// A vector in a stretch of a buffer that may hold others (bound and read as that stretch
/// alone): `offset` a multiple of [`REGION_ALIGN`], `size` of 4.
#[derive(Clone, Debug)]
pub struct Region {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    pub size: u64,
}

impl Region {
    /// All of `buffer`.
    pub fn whole(buffer: wgpu::Buffer) -> Self {
        let size = buffer.size();
        Self {
            buffer,
            offset: 0,
            size,
        }
    }

    /// `count` stretches of `size` bytes each, back to back in `buffer` from its start
    /// (each at the next multiple of [`REGION_ALIGN`]). Panics if the buffer is too small:
    /// [`Region::packed_bytes`] says how large it must be.
    pub fn packed<const N: usize>(buffer: &wgpu::Buffer, size: u64) -> [Region; N] {
        assert!(
            buffer.size() >= Self::packed_bytes(N as u64, size),
            "{N} regions of {size} bytes need {} bytes, the buffer has {}",
            Self::packed_bytes(N as u64, size),
            buffer.size()
        );
        let stride = size.next_multiple_of(REGION_ALIGN);
        std::array::from_fn(|i| Region {
            buffer: buffer.clone(),
            offset: i as u64 * stride,
            size,
        })
    }

    /// Bytes `count` packed regions of `size` bytes take.
    pub fn packed_bytes(count: u64, size: u64) -> u64 {
        count * size.next_multiple_of(REGION_ALIGN)
    }

    /// Blocks until the region's contents are on the host.
    pub fn read<T: bytemuck::Pod>(&self, ctx: &GpuContext) -> Result<Vec<T>, GpuError> {
        read_buffer_range(ctx, &self.buffer, self.offset, self.size)
    }

    /// Queues a write of `data` (at most `size` bytes) to the region's start.
    pub fn write(&self, queue: &wgpu::Queue, data: &[u8]) {
        assert!(
            data.len() as u64 <= self.size,
            "{} bytes into a region of {}",
            data.len(),
            self.size
        );
        queue.write_buffer(&self.buffer, self.offset, data);
    }
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
        let (data, _) = self.read_with::<T>(ctx, None)?;
        Ok(data)
    }

    /// As [`Self::read`], mapping `other` in the same wait (one host read, both buffers'
    /// bytes): its words come back second.
    pub fn read_with<T: bytemuck::Pod>(
        &self,
        ctx: &GpuContext,
        other: Option<&BufferReader>,
    ) -> Result<(Vec<T>, Option<Vec<u32>>), GpuError> {
        let mut readers = vec![self];
        readers.extend(other);
        let mut bytes = read_many(ctx, &readers, None)?.into_iter();
        let data = bytemuck::pod_collect_to_vec::<u8, T>(&bytes.next().unwrap_or_default());
        let other_words = bytes
            .next()
            .map(|b| bytemuck::pod_collect_to_vec::<u8, u32>(&b));
        Ok((data, other_words))
    }

    /// Maps the staging buffer once `submission` (the one that copied into it) is done,
    /// without waiting for what was submitted after it: the GPU goes on with that while
    /// the host reads. Counted as a read, not as a drain ([`super::Traffic::drains`]).
    pub fn read_after(
        &self,
        ctx: &GpuContext,
        submission: wgpu::SubmissionIndex,
    ) -> Result<Vec<u32>, GpuError> {
        let bytes = read_many(ctx, &[self], Some(submission))?;
        Ok(bytemuck::pod_collect_to_vec::<u8, u32>(&bytes[0]))
    }

    /// Maps every reader in one wait for all submitted work (one host read, one drain of
    /// the GPU's queue) and returns their words, in order.
    pub fn read_all(
        ctx: &GpuContext,
        readers: &[&BufferReader],
    ) -> Result<Vec<Vec<u32>>, GpuError> {
        Ok(read_many(ctx, readers, None)?
            .iter()
            .map(|b| bytemuck::pod_collect_to_vec::<u8, u32>(b))
            .collect())
    }
}

/// Maps `readers` in one wait: for `submission` alone, or (None) for everything submitted.
fn read_many(
    ctx: &GpuContext,
    readers: &[&BufferReader],
    submission: Option<wgpu::SubmissionIndex>,
) -> Result<Vec<Vec<u8>>, GpuError> {
    let drains = submission.is_none();
    let maps: Vec<_> = readers
        .iter()
        .map(|r| {
            let slice = r.staging.slice(..r.len);
            let (tx, rx) = std::sync::mpsc::channel();
            slice.map_async(wgpu::MapMode::Read, move |m| {
                let _ = tx.send(m);
            });
            rx
        })
        .collect();
    let start = std::time::Instant::now();
    match submission {
        Some(index) => ctx.wait_for(index)?,
        None => ctx.wait()?,
    }
    let wait_ns = start.elapsed().as_nanos() as u64;
    let mut out = Vec::with_capacity(readers.len());
    for (r, rx) in readers.iter().zip(maps) {
        rx.recv()
            .map_err(|e| GpuError::Readback(e.to_string()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let bytes = {
            let view = r
                .staging
                .slice(..r.len)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            view.to_vec()
        };
        r.staging.unmap();
        out.push(bytes);
    }
    let len: u64 = readers.iter().map(|r| r.len).sum();
    if std::env::var_os("EDDY_TRACE_READS").is_some() {
        eprintln!(
            "read {len} bytes{}:\n{}",
            if drains {
                ""
            } else {
                " (behind one submission)"
            },
            std::backtrace::Backtrace::force_capture()
        );
    }
    super::traffic::count(|t| {
        t.reads += 1;
        t.drains += drains as u64;
        t.bytes_read += len;
        t.wait_ns += wait_ns;
    });
    Ok(out)
}
