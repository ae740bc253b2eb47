// Program.cs: solves the resting 1D stack from C# through Steel.cs and checks the answer.
//
//   mcs -out:SteelExample.exe Steel.cs Program.cs
//   LD_LIBRARY_PATH=<dir of libsteel.so> mono SteelExample.exe
//
// Box k rests on box k-1 (box 0 on the ground); each box has one DOF, its vertical velocity.
// Contact k carries the weight of every box above it for one step: g*dt*sum(m). Exit status 0
// when every impulse matches that closed form, 1 otherwise. Runs as a test (ctest:
// example_csharp).
using System;
using System.Runtime.InteropServices;
using Steel;

static class Program
{
    static int failures = 0;

    static void Expect(bool condition, string what)
    {
        if (!condition) { Console.WriteLine("FAILED: " + what); ++failures; }
    }

    static int Main()
    {
        // The hand-written layouts must match the ones steel.h pins (tests/test_abi_layout.cpp).
        Expect(Marshal.SizeOf(typeof(BatchHandle)) == 8, "sizeof(steel_batch) == 8");
        Expect(Marshal.SizeOf(typeof(BatchDesc)) == 24, "sizeof(steel_batch_desc) == 24");
        Expect(Marshal.SizeOf(typeof(RowsDesc)) == 136, "sizeof(steel_rows_desc) == 136");
        Expect(Marshal.SizeOf(typeof(SolveOptions)) == 64, "sizeof(steel_solve_options) == 64");
        Expect((int)Marshal.OffsetOf(typeof(SolveOptions), "ArticulatedContactResponse") == 56,
               "offsetof(articulated_contact_response) == 56");
        Expect(Marshal.SizeOf(typeof(WorldStats)) == 40, "sizeof(steel_world_stats) == 40");
        Expect((int)Marshal.OffsetOf(typeof(RowsDesc), "InitialImpulse") == 128, "offsetof(initial_impulse) == 128");
        Expect((int)Marshal.OffsetOf(typeof(SolveOptions), "RecordResidualHistory") == 48,
               "offsetof(record_residual_history) == 48");

        // Check the ABI before any struct crosses the boundary.
        uint abi = Native.steel_abi_version();
        Console.WriteLine("Steel " + Native.Text(Native.steel_version()) + ", ABI " + abi);
        if (abi != Abi.Version)
        {
            Console.WriteLine("ABI mismatch: library " + abi + ", these declarations " + Abi.Version);
            return 1;
        }

        const int height = 8;
        const double gDt = 9.81 / 60.0;
        var mass = new double[height];
        for (int k = 0; k < height; ++k) mass[k] = Math.Pow(10.0, k / (double)(height - 1)); // ratio 10

        var rows = new Rows
        {
            WorldDofCounts = new uint[] { height },
            WorldRowCounts = new uint[] { height },
            UnconstrainedVelocity = new double[height],
            BlockOffset = new uint[2 * height],
            BlockLength = new uint[2 * height],
            Jacobian = new double[2 * height - 1],
            Response = new double[2 * height - 1],
            Bias = new double[height],
            Kind = new int[height],
        };
        int value = 0;
        for (int k = 0; k < height; ++k)
        {
            rows.UnconstrainedVelocity[k] = -gDt;
            rows.Kind[k] = RowKind.ContactNormal;
            // Contact k spans boxes k-1 and k (one block of 2 DOFs); contact 0 only box 0.
            rows.BlockOffset[2 * k] = (uint)(k == 0 ? 0 : k - 1);
            rows.BlockLength[2 * k] = (uint)(k == 0 ? 1 : 2);
            if (k > 0)
            {
                rows.Jacobian[value] = -1.0;
                rows.Response[value++] = -1.0 / mass[k - 1]; // Y = H^-1 J^T, H = diag(m)
            }
            rows.Jacobian[value] = 1.0;
            rows.Response[value++] = 1.0 / mass[k];
        }

        using (var batch = new Batch(1))
        {
            batch.UploadRows(rows);
            var options = batch.Options;
            options.Iterations = 10000;
            options.Tolerance = 1e-12;
            options.NesterovMomentum = 1;
            options.RecordResidualHistory = 1;
            batch.Options = options;
            batch.Solve();

            double[] impulses = batch.Impulses();
            double[] velocities = batch.Velocities();
            WorldStats stats = batch.Stats()[0];
            double[] history = batch.ResidualHistory(0);
            Console.WriteLine(height + "-box stack, mass ratio 10: " + stats.Sweeps + " sweeps, residual " +
                              stats.Residual.ToString("E2") + ", " + stats.MomentumRestarts + " momentum restarts");
            Expect((stats.Flags & WorldFlags.Converged) != 0, "converged");
            Expect(history.Length == stats.Sweeps, "one residual per sweep");

            double above = 0, worst = 0;
            for (int k = height - 1; k >= 0; --k)
            {
                above += mass[k];
                worst = Math.Max(worst, Math.Abs(impulses[k] - gDt * above));
                worst = Math.Max(worst, Math.Abs(velocities[k])); // every box comes to rest
            }
            Console.WriteLine("bottom impulse " + impulses[0].ToString("F9") + ", exact " + (gDt * above).ToString("F9") +
                              ", worst error " + worst.ToString("E2"));
            Expect(worst < 1e-9, "impulses match g*dt*sum(m) and velocities are zero");

            // A failed call is an exception carrying Steel's message.
            try
            {
                options.Iterations = 0;
                batch.Options = options;
                Expect(false, "iterations = 0 must be refused");
            }
            catch (SteelException error)
            {
                Console.WriteLine("as expected: " + error.Message);
                Expect(error.Status == Status.InvalidArgument, "status INVALID_ARGUMENT");
                Expect(error.Message.Contains("steel_batch_set_options: iterations = 0"), "Steel's message");
            }
        }

        // Arrays shorter than their counts need are refused before Steel could read past them.
        using (var batch = new Batch(1)) {
            var shortRows = new Rows { WorldDofCounts = new uint[] { 1 },
                                       WorldRowCounts = new uint[] { 1000000 },
                                       UnconstrainedVelocity = new double[] { -1 },
                                       BlockOffset = new uint[] { 0, 0 },
                                       BlockLength = new uint[] { 1, 0 },
                                       Jacobian = new double[] { 1 },
                                       Response = new double[] { 1 },
                                       Bias = new double[] { 0 },
                                       Kind = new int[] { RowKind.ContactNormal } };
            try {
                batch.UploadRows(shortRows);
                Expect(false, "short arrays must be refused");
            } catch (ArgumentException error) {
                Expect(error.Message.StartsWith("Rows.BlockOffset has 2 values but needs 2000000"),
                       "the field named");
            }
        }

        // A disposed batch refuses use instead of passing a dead handle.
        var closed = new Batch(1);
        closed.Dispose();
        closed.Dispose(); // idempotent
        try { closed.Solve(); Expect(false, "a disposed batch must throw"); }
        catch (ObjectDisposedException) { }

        Console.WriteLine(failures == 0 ? "C# example: all checks passed" : failures + " checks failed");
        return failures == 0 ? 0 : 1;
    }
}
