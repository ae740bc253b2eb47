//! The raw C ABI of steel.h, declared by hand. Only fixed-width types cross it (u32, i32, u64,
//! f64, pointers), so every struct is `#[repr(C)]` with the same fields in the same order; the
//! tests in lib.rs check their sizes against the ones tests/test_abi_layout.cpp pins.
#![allow(non_camel_case_types)]

use std::os::raw::c_char;

pub type steel_status = i32;

pub const STEEL_ABI_VERSION: u32 = 1;

pub const STEEL_OK: steel_status = 0;
pub const STEEL_ERROR_INVALID_ARGUMENT: steel_status = -1;
pub const STEEL_ERROR_INVALID_HANDLE: steel_status = -2;
pub const STEEL_ERROR_ABI_MISMATCH: steel_status = -3;
pub const STEEL_ERROR_BUFFER_TOO_SMALL: steel_status = -4;
pub const STEEL_ERROR_UNSUPPORTED: steel_status = -5;
pub const STEEL_ERROR_OUT_OF_MEMORY: steel_status = -6;
pub const STEEL_ERROR_STRUCT_VERSION: steel_status = -7;
pub const STEEL_ERROR_NO_DATA: steel_status = -8;
pub const STEEL_ERROR_INTERNAL: steel_status = -9;
pub const STEEL_ERROR_NO_DEVICE: steel_status = -10;

pub const STEEL_BACKEND_CPU: i32 = 0;
pub const STEEL_BACKEND_CUDA: i32 = 1;
pub const STEEL_PRECISION_FLOAT32: i32 = 1;
pub const STEEL_PRECISION_FLOAT64: i32 = 2;

pub const STEEL_ROW_BILATERAL: i32 = 0;
pub const STEEL_ROW_BOUNDED: i32 = 1;
pub const STEEL_ROW_CONTACT_NORMAL: i32 = 2;
pub const STEEL_ROW_FRICTION_BOX: i32 = 3;
pub const STEEL_ROW_FRICTION_CONE: i32 = 4;

pub const STEEL_PATH_AUTO: i32 = 0;
pub const STEEL_PATH_GENERAL: i32 = 1;
pub const STEEL_PATH_DENSE: i32 = 2;

pub const STEEL_SOLVE_SERIAL: i32 = 0;
pub const STEEL_SOLVE_COLORED: i32 = 1;

pub const STEEL_RESPONSE_IMMEDIATE: i32 = 0;
pub const STEEL_RESPONSE_PROPAGATION: i32 = 1;

pub const STEEL_WORLD_NONFINITE: u32 = 1 << 0;
pub const STEEL_WORLD_CONVERGED: u32 = 1 << 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct steel_batch {
    pub id: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct steel_batch_desc {
    pub struct_size: u32,
    pub backend: i32,
    pub precision: i32,
    pub world_count: u32,
    pub thread_count: u32,
    pub reserved0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct steel_rows_desc {
    pub struct_size: u32,
    pub world_count: u32,
    pub world_dof_counts: *const u32,
    pub world_row_counts: *const u32,
    pub unconstrained_velocity: *const f64,
    pub block_offset: *const u32,
    pub block_length: *const u32,
    pub value_count: u64,
    pub jacobian: *const f64,
    pub response: *const f64,
    pub bias: *const f64,
    pub kind: *const i32,
    pub lower: *const f64,
    pub upper: *const f64,
    pub normal_row: *const i32,
    pub friction: *const f64,
    pub regularization: *const f64,
    pub initial_impulse: *const f64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct steel_solve_options {
    pub struct_size: u32,
    pub iterations: u32,
    pub tolerance: f64,
    pub cfm: f64,
    pub path: i32,
    pub warm_start: u32,
    pub contact_regularization: f64,
    pub nesterov_momentum: u32,
    pub enable_bilateral_preelimination: u32,
    pub record_residual_history: u32,
    pub solve_mode: i32,
    pub articulated_contact_response: i32,
    pub reserved0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct steel_world_stats {
    pub struct_size: u32,
    pub path: i32,
    pub sweeps: u32,
    pub flags: u32,
    pub residual: f64,
    pub first_residual: f64,
    pub momentum_restarts: u32,
    pub reserved0: u32,
}

extern "C" {
    pub fn steel_status_string(status: steel_status) -> *const c_char;
    pub fn steel_last_error_message() -> *const c_char;
    pub fn steel_version() -> *const c_char;
    pub fn steel_abi_version() -> u32;
    pub fn steel_build_features() -> u32;
    pub fn steel_batch_desc_init(out: *mut steel_batch_desc, struct_size: u32) -> steel_status;
    pub fn steel_batch_create(abi_version: u32, desc: *const steel_batch_desc, out: *mut steel_batch) -> steel_status;
    pub fn steel_batch_destroy(batch: steel_batch) -> steel_status;
    pub fn steel_batch_get_desc(batch: steel_batch, out: *mut steel_batch_desc) -> steel_status;
    pub fn steel_rows_desc_init(out: *mut steel_rows_desc, struct_size: u32) -> steel_status;
    pub fn steel_batch_upload_rows(batch: steel_batch, rows: *const steel_rows_desc) -> steel_status;
    pub fn steel_solve_options_init(out: *mut steel_solve_options, struct_size: u32) -> steel_status;
    pub fn steel_batch_set_options(batch: steel_batch, options: *const steel_solve_options) -> steel_status;
    pub fn steel_batch_get_options(batch: steel_batch, out: *mut steel_solve_options) -> steel_status;
    pub fn steel_batch_solve(batch: steel_batch) -> steel_status;
    pub fn steel_batch_read_impulses(batch: steel_batch, out: *mut f64, capacity: u64, out_count: *mut u64)
        -> steel_status;
    pub fn steel_batch_read_velocities(batch: steel_batch, out: *mut f64, capacity: u64, out_count: *mut u64)
        -> steel_status;
    pub fn steel_batch_read_residual_history(batch: steel_batch, world: u32, out: *mut f64, capacity: u32,
                                             out_count: *mut u32) -> steel_status;
    pub fn steel_batch_read_world_stats(batch: steel_batch, element_size: u32, out: *mut steel_world_stats,
                                        capacity: u32, out_count: *mut u32) -> steel_status;
}

/// The struct_size to pass to the steel_*_init functions: this declaration's size, so the library
/// never writes more than the struct holds (C's inline steel_*_default passes sizeof the same way).
pub fn struct_size<T>() -> u32 {
    std::mem::size_of::<T>() as u32
}
