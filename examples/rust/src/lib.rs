//! A small safe wrapper over Steel's C ABI (the raw declarations are in `sys`).
//!
//! - [`Batch`] owns one batch handle; `Drop` destroys it. It is `Send` but not `Sync`: steel.h
//!   says a batch is used by one thread at a time.
//! - Every fallible call returns [`Result`]; an [`Error`] carries the status and Steel's own
//!   message (read right after the failed call, on the same thread, as steel.h asks).
//! - [`Rows`] holds the rows upload as vectors. The C side reads as many values as the counts
//!   say, so `upload_rows` checks every length first: safe code cannot make Steel read past a
//!   vector's end.
pub mod sys;

use std::cell::Cell;
use std::ffi::CStr;
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::ptr;

/// A failed Steel call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The `steel_status` (negative), or `STEEL_ERROR_INVALID_ARGUMENT` for what this wrapper
    /// checks itself.
    pub status: i32,
    /// Steel's message (`steel_last_error_message()`), or the wrapper's.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, status_string(self.status))
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn text(pointer: *const c_char) -> String {
    if pointer.is_null() {
        return String::new();
    }
    // SAFETY: Steel returns NUL-terminated strings that stay valid until the thread's next call.
    unsafe { CStr::from_ptr(pointer) }.to_string_lossy().into_owned()
}

fn check(status: sys::steel_status) -> Result<()> {
    if status == sys::STEEL_OK {
        return Ok(());
    }
    // SAFETY: no arguments; the message belongs to this thread's last (failed) call.
    let message = text(unsafe { sys::steel_last_error_message() });
    Err(Error { status, message })
}

/// Steel's static text for a status ("invalid argument", ...).
pub fn status_string(status: i32) -> String {
    // SAFETY: plain value in, static string out.
    text(unsafe { sys::steel_status_string(status) })
}

/// The library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    // SAFETY: no arguments, static string out.
    text(unsafe { sys::steel_version() })
}

/// The library's ABI version; compare with [`sys::STEEL_ABI_VERSION`] before anything else.
pub fn abi_version() -> u32 {
    // SAFETY: no arguments.
    unsafe { sys::steel_abi_version() }
}

/// Row kinds (steel.h `STEEL_ROW_*`), laid out as the `int32_t` the ABI takes.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Bilateral = sys::STEEL_ROW_BILATERAL,
    Bounded = sys::STEEL_ROW_BOUNDED,
    ContactNormal = sys::STEEL_ROW_CONTACT_NORMAL,
    FrictionBox = sys::STEEL_ROW_FRICTION_BOX,
    FrictionCone = sys::STEEL_ROW_FRICTION_CONE,
}

/// Storage and arithmetic precision of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    Float32,
    Float64,
}

/// The solver path option (`STEEL_PATH_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Auto,
    General,
    Dense,
}

/// The solve mode option (`STEEL_SOLVE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveMode {
    Serial,
    Colored,
}

/// The articulated contact response option (`STEEL_RESPONSE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactResponse {
    Immediate,
    Propagation,
}

/// The rows of every world of a batch, concatenated in world order (docs/rows-format.md).
#[derive(Clone, Debug, Default)]
pub struct Rows {
    pub world_dof_counts: Vec<u32>,
    pub world_row_counts: Vec<u32>,
    pub unconstrained_velocity: Vec<f64>,
    pub block_offset: Vec<u32>,
    pub block_length: Vec<u32>,
    pub jacobian: Vec<f64>,
    pub response: Vec<f64>,
    pub bias: Vec<f64>,
    pub kind: Vec<RowKind>,
    pub lower: Option<Vec<f64>>,
    pub upper: Option<Vec<f64>>,
    pub normal_row: Option<Vec<i32>>,
    pub friction: Option<Vec<f64>>,
    pub regularization: Option<Vec<f64>>,
    pub initial_impulse: Option<Vec<f64>>,
}

/// The solve options, with booleans where the ABI has 0/1 fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub iterations: u32,
    pub tolerance: f64,
    pub cfm: f64,
    pub path: Path,
    pub warm_start: bool,
    pub contact_regularization: f64,
    pub nesterov_momentum: bool,
    pub enable_bilateral_preelimination: bool,
    pub record_residual_history: bool,
    pub solve_mode: SolveMode,
    pub articulated_contact_response: ContactResponse,
}

impl Options {
    fn from_raw(raw: &sys::steel_solve_options) -> Options {
        Options {
            iterations: raw.iterations,
            tolerance: raw.tolerance,
            cfm: raw.cfm,
            path: match raw.path {
                sys::STEEL_PATH_GENERAL => Path::General,
                sys::STEEL_PATH_DENSE => Path::Dense,
                _ => Path::Auto,
            },
            warm_start: raw.warm_start != 0,
            contact_regularization: raw.contact_regularization,
            nesterov_momentum: raw.nesterov_momentum != 0,
            enable_bilateral_preelimination: raw.enable_bilateral_preelimination != 0,
            record_residual_history: raw.record_residual_history != 0,
            solve_mode: match raw.solve_mode {
                sys::STEEL_SOLVE_COLORED => SolveMode::Colored,
                _ => SolveMode::Serial,
            },
            articulated_contact_response: match raw.articulated_contact_response {
                sys::STEEL_RESPONSE_PROPAGATION => ContactResponse::Propagation,
                _ => ContactResponse::Immediate,
            },
        }
    }

    fn to_raw(&self) -> sys::steel_solve_options {
        let mut raw = raw_default_options();
        raw.iterations = self.iterations;
        raw.tolerance = self.tolerance;
        raw.cfm = self.cfm;
        raw.path = match self.path {
            Path::Auto => sys::STEEL_PATH_AUTO,
            Path::General => sys::STEEL_PATH_GENERAL,
            Path::Dense => sys::STEEL_PATH_DENSE,
        };
        raw.warm_start = self.warm_start as u32;
        raw.contact_regularization = self.contact_regularization;
        raw.nesterov_momentum = self.nesterov_momentum as u32;
        raw.enable_bilateral_preelimination = self.enable_bilateral_preelimination as u32;
        raw.record_residual_history = self.record_residual_history as u32;
        raw.solve_mode = match self.solve_mode {
            SolveMode::Serial => sys::STEEL_SOLVE_SERIAL,
            SolveMode::Colored => sys::STEEL_SOLVE_COLORED,
        };
        raw.articulated_contact_response = match self.articulated_contact_response {
            ContactResponse::Immediate => sys::STEEL_RESPONSE_IMMEDIATE,
            ContactResponse::Propagation => sys::STEEL_RESPONSE_PROPAGATION,
        };
        raw
    }
}

fn raw_default_options() -> sys::steel_solve_options {
    let mut raw = sys::steel_solve_options::default();
    // SAFETY: writes the size we pass of one struct we own.
    let status = unsafe { sys::steel_solve_options_init(&mut raw, sys::struct_size::<sys::steel_solve_options>()) };
    debug_assert_eq!(status, sys::STEEL_OK, "our own struct size is always accepted");
    raw
}

impl Default for Options {
    /// steel_solve_options_init, from the library.
    fn default() -> Options {
        Options::from_raw(&raw_default_options())
    }
}

/// One world's statistics of the last solve.
pub type WorldStats = sys::steel_world_stats;

/// A batch of worlds; destroyed on drop.
#[derive(Debug)]
pub struct Batch {
    handle: sys::steel_batch,
    _not_sync: PhantomData<Cell<()>>, // one thread at a time (steel.h); moving is fine
}

fn invalid(message: String) -> Error {
    Error { status: sys::STEEL_ERROR_INVALID_ARGUMENT, message }
}

fn check_len(name: &str, len: usize, needed: u64, what: &str) -> Result<()> {
    if len as u64 != needed {
        return Err(invalid(format!("Rows::{name} has {len} values but needs {needed} ({what})")));
    }
    Ok(())
}

fn optional_ptr<T>(values: &Option<Vec<T>>) -> *const T {
    values.as_ref().map_or(ptr::null(), |v| v.as_ptr())
}

impl Batch {
    /// A CPU batch of `world_count` worlds.
    pub fn new(world_count: u32, precision: Precision) -> Result<Batch> {
        let mut desc = sys::steel_batch_desc::default();
        // SAFETY: writes the size we pass of one struct we own.
        check(unsafe { sys::steel_batch_desc_init(&mut desc, sys::struct_size::<sys::steel_batch_desc>()) })?;
        desc.world_count = world_count;
        desc.precision = match precision {
            Precision::Float32 => sys::STEEL_PRECISION_FLOAT32,
            Precision::Float64 => sys::STEEL_PRECISION_FLOAT64,
        };
        let mut handle = sys::steel_batch::default();
        // SAFETY: valid pointers to a filled desc and an output handle.
        check(unsafe { sys::steel_batch_create(sys::STEEL_ABI_VERSION, &desc, &mut handle) })?;
        Ok(Batch { handle, _not_sync: PhantomData })
    }

    /// The raw handle, for calls this wrapper does not cover. Do not destroy it.
    pub fn handle(&self) -> sys::steel_batch {
        self.handle
    }

    /// Uploads every world's rows (copied by Steel). Lengths are checked here, contents by Steel.
    pub fn upload_rows(&mut self, rows: &Rows) -> Result<()> {
        let worlds = rows.world_dof_counts.len();
        check_len("world_row_counts", rows.world_row_counts.len(), worlds as u64, "one per world")?;
        let total_dofs: u64 = rows.world_dof_counts.iter().map(|&n| u64::from(n)).sum();
        let total_rows: u64 = rows.world_row_counts.iter().map(|&m| u64::from(m)).sum();
        check_len("unconstrained_velocity", rows.unconstrained_velocity.len(), total_dofs, "total_dofs")?;
        check_len("block_offset", rows.block_offset.len(), 2 * total_rows, "2 * total_rows")?;
        check_len("block_length", rows.block_length.len(), 2 * total_rows, "2 * total_rows")?;
        check_len("response", rows.response.len(), rows.jacobian.len() as u64, "as many as jacobian")?;
        check_len("bias", rows.bias.len(), total_rows, "total_rows")?;
        check_len("kind", rows.kind.len(), total_rows, "total_rows")?;
        for (name, values) in [
            ("lower", &rows.lower),
            ("upper", &rows.upper),
            ("friction", &rows.friction),
            ("regularization", &rows.regularization),
            ("initial_impulse", &rows.initial_impulse),
        ] {
            if let Some(values) = values {
                check_len(name, values.len(), total_rows, "total_rows")?;
            }
        }
        if let Some(values) = &rows.normal_row {
            check_len("normal_row", values.len(), total_rows, "total_rows")?;
        }
        let world_count =
            u32::try_from(worlds).map_err(|_| invalid(format!("{worlds} worlds is more than u32 can count")))?;

        let mut desc = std::mem::MaybeUninit::<sys::steel_rows_desc>::uninit();
        // SAFETY: steel_rows_desc_init writes every field of the size we pass, or fails (and we
        // return before reading any).
        check(unsafe { sys::steel_rows_desc_init(desc.as_mut_ptr(), sys::struct_size::<sys::steel_rows_desc>()) })?;
        // SAFETY: initialised by the successful call above.
        let mut desc = unsafe { desc.assume_init() };
        desc.world_count = world_count;
        desc.world_dof_counts = rows.world_dof_counts.as_ptr();
        desc.world_row_counts = rows.world_row_counts.as_ptr();
        desc.unconstrained_velocity = rows.unconstrained_velocity.as_ptr();
        desc.block_offset = rows.block_offset.as_ptr();
        desc.block_length = rows.block_length.as_ptr();
        desc.value_count = rows.jacobian.len() as u64;
        desc.jacobian = rows.jacobian.as_ptr();
        desc.response = rows.response.as_ptr();
        desc.bias = rows.bias.as_ptr();
        desc.kind = rows.kind.as_ptr() as *const i32; // RowKind is #[repr(i32)]
        desc.lower = optional_ptr(&rows.lower);
        desc.upper = optional_ptr(&rows.upper);
        desc.normal_row = optional_ptr(&rows.normal_row);
        desc.friction = optional_ptr(&rows.friction);
        desc.regularization = optional_ptr(&rows.regularization);
        desc.initial_impulse = optional_ptr(&rows.initial_impulse);
        // SAFETY: every pointer covers the count Steel reads (checked above) and outlives the call.
        check(unsafe { sys::steel_batch_upload_rows(self.handle, &desc) })
    }

    pub fn options(&self) -> Result<Options> {
        let mut raw = raw_default_options();
        // SAFETY: raw.struct_size is set; Steel writes that many bytes.
        check(unsafe { sys::steel_batch_get_options(self.handle, &mut raw) })?;
        Ok(Options::from_raw(&raw))
    }

    pub fn set_options(&mut self, options: &Options) -> Result<()> {
        let raw = options.to_raw();
        // SAFETY: a complete options struct.
        check(unsafe { sys::steel_batch_set_options(self.handle, &raw) })
    }

    pub fn solve(&mut self) -> Result<()> {
        // SAFETY: a handle we own.
        check(unsafe { sys::steel_batch_solve(self.handle) })
    }

    fn read_vector(
        &self,
        read: unsafe extern "C" fn(sys::steel_batch, *mut f64, u64, *mut u64) -> sys::steel_status,
    ) -> Result<Vec<f64>> {
        let mut count = 0u64;
        // SAFETY: a NULL output asks for the count only.
        check(unsafe { read(self.handle, ptr::null_mut(), 0, &mut count) })?;
        let mut out = vec![0.0; count as usize];
        // SAFETY: out holds `count` values.
        check(unsafe { read(self.handle, out.as_mut_ptr(), count, &mut count) })?;
        Ok(out)
    }

    /// λ of every row, concatenated over worlds.
    pub fn impulses(&self) -> Result<Vec<f64>> {
        self.read_vector(sys::steel_batch_read_impulses)
    }

    /// v = v̂ + Yλ of every world, concatenated.
    pub fn velocities(&self) -> Result<Vec<f64>> {
        self.read_vector(sys::steel_batch_read_velocities)
    }

    pub fn stats(&self) -> Result<Vec<WorldStats>> {
        let size = std::mem::size_of::<WorldStats>() as u32;
        let mut count = 0u32;
        // SAFETY: a NULL output asks for the count only.
        check(unsafe { sys::steel_batch_read_world_stats(self.handle, size, ptr::null_mut(), 0, &mut count) })?;
        let mut out = vec![WorldStats::default(); count as usize];
        // SAFETY: out holds `count` elements of `size` bytes.
        check(unsafe { sys::steel_batch_read_world_stats(self.handle, size, out.as_mut_ptr(), count, &mut count) })?;
        Ok(out)
    }

    /// The residual of every sweep of the last solve in `world` (needs record_residual_history).
    pub fn residual_history(&self, world: u32) -> Result<Vec<f64>> {
        let mut count = 0u32;
        // SAFETY: a NULL output asks for the count only.
        check(unsafe {
            sys::steel_batch_read_residual_history(self.handle, world, ptr::null_mut(), 0, &mut count)
        })?;
        let mut out = vec![0.0; count as usize];
        // SAFETY: out holds `count` values.
        check(unsafe {
            sys::steel_batch_read_residual_history(self.handle, world, out.as_mut_ptr(), count, &mut count)
        })?;
        Ok(out)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and destroyed exactly once, here.
        unsafe { sys::steel_batch_destroy(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{size_of, MaybeUninit};

    // offset_of! without needing Rust 1.77 (Debian 12's rustc is 1.63).
    macro_rules! offset_of {
        ($type:ty, $field:ident) => {{
            let value = MaybeUninit::<$type>::uninit();
            let base = value.as_ptr();
            // SAFETY: only the field's address is taken; nothing is read.
            let field = unsafe { std::ptr::addr_of!((*base).$field) };
            field as usize - base as usize
        }};
    }

    #[test]
    fn layouts_match_the_header() {
        // The sizes and offsets tests/test_abi_layout.cpp pins for ABI version 1.
        assert_eq!(sys::STEEL_ABI_VERSION, 1);
        assert_eq!(size_of::<sys::steel_batch>(), 8);
        assert_eq!(size_of::<sys::steel_batch_desc>(), 24);
        assert_eq!(size_of::<sys::steel_rows_desc>(), 136);
        assert_eq!(offset_of!(sys::steel_rows_desc, value_count), 48);
        assert_eq!(offset_of!(sys::steel_rows_desc, initial_impulse), 128);
        assert_eq!(size_of::<sys::steel_solve_options>(), 64);
        assert_eq!(offset_of!(sys::steel_solve_options, articulated_contact_response), 56);
        assert_eq!(offset_of!(sys::steel_solve_options, record_residual_history), 48);
        assert_eq!(size_of::<sys::steel_world_stats>(), 40);
        assert_eq!(offset_of!(sys::steel_world_stats, momentum_restarts), 32);
        assert_eq!(size_of::<RowKind>(), 4);
    }

    #[test]
    fn the_library_has_this_abi() {
        assert_eq!(abi_version(), sys::STEEL_ABI_VERSION);
    }

    fn one_contact() -> Rows {
        Rows {
            world_dof_counts: vec![1],
            world_row_counts: vec![1],
            unconstrained_velocity: vec![-1.0],
            block_offset: vec![0, 0],
            block_length: vec![1, 0],
            jacobian: vec![1.0],
            response: vec![0.5],
            bias: vec![0.0],
            kind: vec![RowKind::ContactNormal],
            ..Rows::default()
        }
    }

    #[test]
    fn a_resting_box_needs_its_weight() -> Result<()> {
        let mut batch = Batch::new(1, Precision::Float64)?;
        batch.upload_rows(&one_contact())?;
        batch.solve()?;
        assert_eq!(batch.impulses()?, vec![2.0]);
        assert_eq!(batch.velocities()?, vec![0.0]);
        Ok(())
    }

    #[test]
    fn errors_carry_steels_message() {
        let mut batch = Batch::new(1, Precision::Float64).unwrap();
        let error = batch.solve().unwrap_err();
        assert_eq!(error.status, sys::STEEL_ERROR_NO_DATA);
        assert!(error.message.contains("steel_batch_solve: no rows have been uploaded"), "{error}");
        let mut rows = one_contact();
        rows.response = vec![-0.5];
        let error = batch.upload_rows(&rows).unwrap_err();
        assert_eq!(error.status, sys::STEEL_ERROR_INVALID_ARGUMENT);
        assert!(error.message.contains("must be positive and finite"), "{error}");
        let error = Batch::new(0, Precision::Float32).unwrap_err();
        assert!(error.message.contains("world_count is 0"), "{error}");
        assert!(error.to_string().ends_with("[invalid argument]"), "{error}");
    }

    #[test]
    fn short_vectors_never_reach_steel() {
        let mut batch = Batch::new(1, Precision::Float64).unwrap();
        let mut rows = one_contact();
        rows.bias.clear();
        let error = batch.upload_rows(&rows).unwrap_err();
        assert_eq!(error.message, "Rows::bias has 0 values but needs 1 (total_rows)");
    }

    #[test]
    fn options_round_trip() -> Result<()> {
        let mut batch = Batch::new(1, Precision::Float64)?;
        let options = Options { iterations: 9, path: Path::Dense, nesterov_momentum: true, ..Options::default() };
        batch.set_options(&options)?;
        assert_eq!(batch.options()?, options);
        // Every option survives a round trip, the modes included (they were once reset).
        let modes = Options {
            solve_mode: SolveMode::Colored,
            articulated_contact_response: ContactResponse::Propagation,
            ..Options::default()
        };
        batch.set_options(&modes)?;
        assert_eq!(batch.options()?, modes);
        batch.set_options(&Options { iterations: 77, ..batch.options()? })?;
        assert_eq!(batch.options()?.articulated_contact_response, ContactResponse::Propagation);
        Ok(())
    }
}
