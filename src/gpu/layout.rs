//! Byte layouts of the Rust structs that mirror WGSL structs (`#[repr(C)]` + `Pod`, written
//! to uniform and storage buffers as they are). Each mirror declares, with [`wgsl_mirror!`],
//! which WGSL struct it stands for and which Rust field holds each WGSL member; the test
//! `tests/shaders.rs` compares that with naga's layout of the WGSL struct (size, every
//! member's offset and size, and the alignment that fixes an array's stride), so a field
//! reordered or resized on one side fails there.

/// One mirror: the Rust struct's layout and the WGSL struct it must match.
#[derive(Clone, Debug)]
pub struct MirrorLayout {
    /// The Rust type, for messages.
    pub rust: &'static str,
    /// The WGSL file (as `expand_wgsl` names it) that declares the struct.
    pub shader: &'static str,
    /// The WGSL struct's name.
    pub wgsl: &'static str,
    /// `size_of` the Rust struct.
    pub size: usize,
    /// (WGSL member, byte offset, byte size) of the Rust field that holds it, in order.
    pub members: Vec<(&'static str, usize, usize)>,
    /// The WGSL struct continues past the Rust struct (a runtime-sized array the Rust side
    /// does not mirror): its next member starts at `size`.
    pub prefix: bool,
}

/// Size of the field that `_f` projects to.
#[doc(hidden)]
pub fn field_size<S, F>(_f: fn(&S) -> &F) -> usize {
    std::mem::size_of::<F>()
}

/// Declares `pub fn $fn_name() -> MirrorLayout` for `#[repr(C)]` struct `$ty`, the mirror of
/// WGSL struct `$wgsl` in `$shader`. Members are listed in WGSL order as
/// `wgsl_member: rust_field`, or `wgsl_member: rust_field[k]` for the k-th u32 of a padding
/// array. A trailing `..` marks a WGSL struct that goes on past the Rust one.
#[macro_export]
macro_rules! wgsl_mirror {
    (@member $ty:ty, $w:ident, $r:ident) => {
        (
            stringify!($w),
            std::mem::offset_of!($ty, $r),
            $crate::gpu::layout::field_size(|s: &$ty| &s.$r),
        )
    };
    (@member $ty:ty, $w:ident, $r:ident [$k:literal]) => {
        (stringify!($w), std::mem::offset_of!($ty, $r) + 4 * $k, 4)
    };
    ($fn_name:ident: $ty:ty = $shader:literal $wgsl:ident {
        $($w:ident: $r:ident $([$k:literal])?,)* ..
    }) => {
        $crate::wgsl_mirror!(@fn $fn_name, $ty, $shader, $wgsl, true, $($w: $r $([$k])?),*);
    };
    ($fn_name:ident: $ty:ty = $shader:literal $wgsl:ident {
        $($w:ident: $r:ident $([$k:literal])?),* $(,)?
    }) => {
        $crate::wgsl_mirror!(@fn $fn_name, $ty, $shader, $wgsl, false, $($w: $r $([$k])?),*);
    };
    (@fn $fn_name:ident, $ty:ty, $shader:literal, $wgsl:ident, $prefix:literal,
        $($w:ident: $r:ident $([$k:literal])?),*) => {
        /// Layout of this Rust mirror of a WGSL struct, checked in tests/shaders.rs.
        #[doc(hidden)]
        pub fn $fn_name() -> $crate::gpu::layout::MirrorLayout {
            $crate::gpu::layout::MirrorLayout {
                rust: stringify!($ty),
                shader: $shader,
                wgsl: stringify!($wgsl),
                size: std::mem::size_of::<$ty>(),
                members: vec![$($crate::wgsl_mirror!(@member $ty, $w, $r $([$k])?)),*],
                prefix: $prefix,
            }
        }
    };
}
