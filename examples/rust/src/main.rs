//! Solves the resting 1D stack from Rust through the safe wrapper and checks the answer.
//!
//!   STEEL_LIB_DIR=<dir of libsteel.so> cargo build --offline
//!   LD_LIBRARY_PATH=<same dir> target/debug/steel-stack
//!
//! Box k rests on box k-1 (box 0 on the ground); each box has one DOF, its vertical velocity.
//! Contact k carries the weight of every box above it for one step: g*dt*sum(m). Exits 0 when
//! every impulse matches, 1 otherwise. Runs as a test (ctest: example_rust).
use std::process::ExitCode;

use steel::{Batch, Options, Precision, RowKind, Rows};

fn stack(masses: &[f64], g_dt: f64) -> Rows {
    let height = masses.len();
    let mut rows = Rows {
        world_dof_counts: vec![height as u32],
        world_row_counts: vec![height as u32],
        unconstrained_velocity: vec![-g_dt; height],
        bias: vec![0.0; height],
        kind: vec![RowKind::ContactNormal; height],
        ..Rows::default()
    };
    for k in 0..height {
        if k == 0 {
            // The ground contact: box 0 alone.
            rows.block_offset.extend([0, 0]);
            rows.block_length.extend([1, 0]);
            rows.jacobian.push(1.0);
            rows.response.push(1.0 / masses[0]);
        } else {
            // Boxes k-1 and k, adjacent DOFs: one block of two. Y = H^-1 J^T with H = diag(m).
            rows.block_offset.extend([k as u32 - 1, 0]);
            rows.block_length.extend([2, 0]);
            rows.jacobian.extend([-1.0, 1.0]);
            rows.response.extend([-1.0 / masses[k - 1], 1.0 / masses[k]]);
        }
    }
    rows
}

fn run() -> steel::Result<bool> {
    if steel::abi_version() != steel::sys::STEEL_ABI_VERSION {
        eprintln!("ABI mismatch: library {}, these declarations {}", steel::abi_version(),
                  steel::sys::STEEL_ABI_VERSION);
        return Ok(false);
    }
    println!("Steel {}, ABI {}", steel::version(), steel::abi_version());

    let g_dt = 9.81 / 60.0;
    let height = 12;
    let masses: Vec<f64> = (0..height).map(|k| 100f64.powf(k as f64 / (height - 1) as f64)).collect(); // ratio 100

    let mut batch = Batch::new(1, Precision::Float64)?;
    batch.upload_rows(&stack(&masses, g_dt))?;
    batch.set_options(&Options {
        iterations: 20_000,
        tolerance: 1e-12,
        nesterov_momentum: true,
        record_residual_history: true,
        ..Options::default()
    })?;
    batch.solve()?;

    let impulses = batch.impulses()?;
    let stats = batch.stats()?[0];
    let history = batch.residual_history(0)?;
    let mut above = 0.0;
    let mut worst: f64 = 0.0;
    for k in (0..height).rev() {
        above += masses[k];
        worst = worst.max((impulses[k] / (g_dt * above) - 1.0).abs()); // relative error
    }
    println!(
        "{height}-box stack, mass ratio 100: {} sweeps ({} recorded), residual {:.2e}, {} momentum restarts",
        stats.sweeps, history.len(), stats.residual, stats.momentum_restarts
    );
    println!("bottom impulse {:.9}, exact {:.9}, worst relative error {:.2e}", impulses[0], g_dt * above, worst);

    // A failed call is an Err carrying Steel's message.
    let error = batch.set_options(&Options { iterations: 0, ..Options::default() }).unwrap_err();
    println!("as expected: {error}");
    let message_ok = error.message.contains("steel_batch_set_options: iterations = 0");

    Ok(worst < 1e-10 && stats.flags & steel::sys::STEEL_WORLD_CONVERGED != 0 && message_ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => {
            println!("Rust example: all checks passed");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("Rust example: a check failed");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("Steel error: {error}");
            ExitCode::FAILURE
        }
    }
}
