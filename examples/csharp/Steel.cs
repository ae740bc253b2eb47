// Steel.cs: Steel's C ABI declared by hand for C# (P/Invoke), and a small safe wrapper.
//
// The ABI is made for this: only fixed-width types cross it (no bool, no long, no enum-typed
// fields), so every struct below is blittable and passes by pointer without marshalling copies.
// Layouts follow steel.h field by field; Program.cs checks their sizes against the ones
// tests/test_abi_layout.cpp pins. Two things to get right by hand:
//  - const char* results (messages, version) are IntPtr, read with Marshal.PtrToStringAnsi. A
//    `string` return type would make the marshaller free Steel's static text.
//  - steel_batch is a struct holding one ulong, passed by value exactly like in C.
using System;
using System.Runtime.InteropServices;

namespace Steel
{
    public static class Abi
    {
        public const uint Version = 1; // STEEL_ABI_VERSION of the steel.h these declarations follow
    }

    public static class Status
    {
        public const int Ok = 0, InvalidArgument = -1, InvalidHandle = -2, AbiMismatch = -3,
                         BufferTooSmall = -4, Unsupported = -5, OutOfMemory = -6,
                         StructVersion = -7, NoData = -8, Internal = -9, NoDevice = -10;
    }

    public static class RowKind
    {
        public const int Bilateral = 0, Bounded = 1, ContactNormal = 2, FrictionBox = 3, FrictionCone = 4;
    }

    public static class SolverPath
    {
        public const int Auto = 0, General = 1, Dense = 2;
    }

    public static class WorldFlags
    {
        public const uint NonFinite = 1u << 0, Converged = 1u << 1;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct BatchHandle
    {
        public ulong Id; // 0 is the null handle
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct BatchDesc
    {
        public uint StructSize;
        public int Backend;   // 0 cpu, 1 cuda
        public int Precision; // 1 float32, 2 float64
        public uint WorldCount;
        public uint ThreadCount;
        public uint Reserved0;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct RowsDesc
    {
        public uint StructSize;
        public uint WorldCount;
        public IntPtr WorldDofCounts;        // const uint32_t*
        public IntPtr WorldRowCounts;        // const uint32_t*
        public IntPtr UnconstrainedVelocity; // const double*
        public IntPtr BlockOffset;           // const uint32_t*
        public IntPtr BlockLength;           // const uint32_t*
        public ulong ValueCount;
        public IntPtr Jacobian;              // const double*
        public IntPtr Response;              // const double*
        public IntPtr Bias;                  // const double*
        public IntPtr Kind;                  // const int32_t*
        public IntPtr Lower;                 // const double*, may be null
        public IntPtr Upper;                 // const double*, may be null
        public IntPtr NormalRow;             // const int32_t*, may be null
        public IntPtr Friction;              // const double*, may be null
        public IntPtr Regularization;        // const double*, may be null
        public IntPtr InitialImpulse;        // const double*, may be null
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct SolveOptions
    {
        public uint StructSize;
        public uint Iterations;
        public double Tolerance;
        public double Cfm;
        public int Path;
        public uint WarmStart;               // 0 / 1
        public double ContactRegularization;
        public uint NesterovMomentum;        // 0 / 1
        public uint EnableBilateralPreelimination; // 0 / 1
        public uint RecordResidualHistory;   // 0 / 1
        public int SolveMode;                // STEEL_SOLVE_*
        public int ArticulatedContactResponse; // STEEL_RESPONSE_*
        public uint Reserved0;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct WorldStats
    {
        public uint StructSize;
        public int Path;
        public uint Sweeps;
        public uint Flags;
        public double Residual;
        public double FirstResidual;
        public uint MomentumRestarts;
        public uint Reserved0;
    }

    // The raw functions, one to one with steel.h. "steel" resolves to libsteel.so on the
    // loader's path (LD_LIBRARY_PATH, or the system's after install).
    public static class Native
    {
        const string Lib = "steel";
        [DllImport(Lib)] public static extern IntPtr steel_status_string(int status);
        [DllImport(Lib)] public static extern IntPtr steel_last_error_message();
        [DllImport(Lib)] public static extern IntPtr steel_version();
        [DllImport(Lib)] public static extern uint steel_abi_version();
        [DllImport(Lib)] public static extern uint steel_build_features();
        [DllImport(Lib)]
        public static extern int steel_batch_desc_init(out BatchDesc desc, uint structSize);
        [DllImport(Lib)] public static extern int steel_batch_create(uint abiVersion, ref BatchDesc desc, out BatchHandle batch);
        [DllImport(Lib)] public static extern int steel_batch_destroy(BatchHandle batch);
        [DllImport(Lib)] public static extern int steel_batch_get_desc(BatchHandle batch, ref BatchDesc desc);
        [DllImport(Lib)]
        public static extern int steel_rows_desc_init(out RowsDesc rows, uint structSize);
        [DllImport(Lib)] public static extern int steel_batch_upload_rows(BatchHandle batch, ref RowsDesc rows);
        [DllImport(Lib)]
        public static extern int steel_solve_options_init(out SolveOptions options,
                                                          uint structSize);
        [DllImport(Lib)] public static extern int steel_batch_set_options(BatchHandle batch, ref SolveOptions options);
        [DllImport(Lib)] public static extern int steel_batch_get_options(BatchHandle batch, ref SolveOptions options);
        [DllImport(Lib)] public static extern int steel_batch_solve(BatchHandle batch);
        [DllImport(Lib)] public static extern int steel_batch_read_impulses(BatchHandle batch, [Out] double[] output, ulong capacity, out ulong count);
        [DllImport(Lib)] public static extern int steel_batch_read_velocities(BatchHandle batch, [Out] double[] output, ulong capacity, out ulong count);
        [DllImport(Lib)] public static extern int steel_batch_read_residual_history(BatchHandle batch, uint world, [Out] double[] output, uint capacity, out uint count);
        [DllImport(Lib)] public static extern int steel_batch_read_world_stats(BatchHandle batch, uint elementSize, [Out] WorldStats[] output, uint capacity, out uint count);

        public static string Text(IntPtr text) { return Marshal.PtrToStringAnsi(text) ?? ""; }
    }

    // A failed Steel call: the status and Steel's own message.
    public sealed class SteelException : Exception
    {
        public readonly int Status;
        public SteelException(int status, string message)
            : base(message + " [" + Native.Text(Native.steel_status_string(status)) + "]") { Status = status; }

        public static void Check(int status)
        {
            if (status != Steel.Status.Ok) throw new SteelException(status, Native.Text(Native.steel_last_error_message()));
        }
    }

    // The rows of all worlds as managed arrays (steel.h's steel_rows_desc, field by field).
    public sealed class Rows
    {
        public uint[] WorldDofCounts, WorldRowCounts, BlockOffset, BlockLength;
        public double[] UnconstrainedVelocity, Jacobian, Response, Bias;
        public int[] Kind;
        public double[] Lower, Upper, Friction, Regularization, InitialImpulse; // may be null
        public int[] NormalRow;                                                 // may be null
    }

    // A batch that owns its handle: Dispose (or the finalizer) destroys it once. Every method
    // ends with GC.KeepAlive(this): a runtime that tracks references precisely could otherwise
    // finalize the batch (destroying the handle) while the native call still uses it.
    public sealed class Batch : IDisposable
    {
        BatchHandle handle;

        public Batch(uint worldCount)
        {
            BatchDesc desc;
            SteelException.Check(
                Native.steel_batch_desc_init(out desc, (uint)Marshal.SizeOf(typeof(BatchDesc))));
            desc.WorldCount = worldCount;
            SteelException.Check(Native.steel_batch_create(Abi.Version, ref desc, out handle));
        }

        public BatchHandle Handle { get { return Live(); } }

        BatchHandle Live()
        {
            if (handle.Id == 0) throw new ObjectDisposedException("Steel.Batch");
            return handle;
        }

        // Steel reads each array to the length its counts give: a shorter managed array would be
        // read past its end. So every array given must have exactly that length (null ones are
        // Steel's to refuse where they are needed).
        static void CheckLength(Array array, ulong expected, string field, string count) {
            if (array != null && (ulong)array.LongLength != expected)
                throw new ArgumentException("Rows." + field + " has " + array.LongLength +
                                                " values but needs " + expected + " (" + count +
                                                ")",
                                            field);
        }

        static ulong Sum(uint[] counts) {
            ulong sum = 0;
            foreach (uint count in counts)
                sum += count;
            return sum;
        }

        // Pins every array for the duration of the call, so Steel reads them in place.
        public void UploadRows(Rows rows)
        {
            if (rows == null) throw new ArgumentNullException("rows");
            if (rows.WorldDofCounts == null) throw new ArgumentNullException("WorldDofCounts");
            if (rows.WorldRowCounts == null) throw new ArgumentNullException("WorldRowCounts");
            ulong worlds = (ulong)rows.WorldDofCounts.LongLength;
            ulong dofs = Sum(rows.WorldDofCounts), rowCount = Sum(rows.WorldRowCounts);
            ulong values = rows.Jacobian != null ? (ulong)rows.Jacobian.LongLength : 0;
            CheckLength(rows.WorldRowCounts, worlds, "WorldRowCounts", "WorldDofCounts.Length");
            CheckLength(rows.UnconstrainedVelocity, dofs, "UnconstrainedVelocity",
                        "the sum of WorldDofCounts");
            CheckLength(rows.BlockOffset, 2 * rowCount, "BlockOffset",
                        "2 * the sum of WorldRowCounts");
            CheckLength(rows.BlockLength, 2 * rowCount, "BlockLength",
                        "2 * the sum of WorldRowCounts");
            CheckLength(rows.Response, values, "Response", "Jacobian.Length");
            const string perRow = "the sum of WorldRowCounts";
            CheckLength(rows.Bias, rowCount, "Bias", perRow);
            CheckLength(rows.Kind, rowCount, "Kind", perRow);
            CheckLength(rows.Lower, rowCount, "Lower", perRow);
            CheckLength(rows.Upper, rowCount, "Upper", perRow);
            CheckLength(rows.NormalRow, rowCount, "NormalRow", perRow);
            CheckLength(rows.Friction, rowCount, "Friction", perRow);
            CheckLength(rows.Regularization, rowCount, "Regularization", perRow);
            CheckLength(rows.InitialImpulse, rowCount, "InitialImpulse", perRow);
            var arrays = new Array[] { rows.WorldDofCounts, rows.WorldRowCounts, rows.UnconstrainedVelocity,
                                       rows.BlockOffset, rows.BlockLength, rows.Jacobian, rows.Response, rows.Bias,
                                       rows.Kind, rows.Lower, rows.Upper, rows.NormalRow, rows.Friction,
                                       rows.Regularization, rows.InitialImpulse };
            var pins = new GCHandle[arrays.Length];
            var pointers = new IntPtr[arrays.Length];
            try
            {
                for (int i = 0; i < arrays.Length; ++i)
                {
                    if (arrays[i] == null) continue;
                    pins[i] = GCHandle.Alloc(arrays[i], GCHandleType.Pinned);
                    pointers[i] = pins[i].AddrOfPinnedObject();
                }
                RowsDesc desc;
                SteelException.Check(
                    Native.steel_rows_desc_init(out desc, (uint)Marshal.SizeOf(typeof(RowsDesc))));
                desc.WorldCount = (uint)worlds;
                desc.WorldDofCounts = pointers[0];
                desc.WorldRowCounts = pointers[1];
                desc.UnconstrainedVelocity = pointers[2];
                desc.BlockOffset = pointers[3];
                desc.BlockLength = pointers[4];
                desc.ValueCount = values;
                desc.Jacobian = pointers[5];
                desc.Response = pointers[6];
                desc.Bias = pointers[7];
                desc.Kind = pointers[8];
                desc.Lower = pointers[9];
                desc.Upper = pointers[10];
                desc.NormalRow = pointers[11];
                desc.Friction = pointers[12];
                desc.Regularization = pointers[13];
                desc.InitialImpulse = pointers[14];
                SteelException.Check(Native.steel_batch_upload_rows(Live(), ref desc));
            }
            finally
            {
                foreach (var pin in pins) if (pin.IsAllocated) pin.Free();
                GC.KeepAlive(this);
            }
        }

        public SolveOptions Options
        {
            get
            {
                SolveOptions options;
                SteelException.Check(Native.steel_solve_options_init(
                    out options, (uint)Marshal.SizeOf(typeof(SolveOptions))));
                SteelException.Check(Native.steel_batch_get_options(Live(), ref options));
                GC.KeepAlive(this);
                return options;
            }
            set {
                SteelException.Check(Native.steel_batch_set_options(Live(), ref value));
                GC.KeepAlive(this);
            }
        }

        public void Solve() {
            SteelException.Check(Native.steel_batch_solve(Live()));
            GC.KeepAlive(this);
        }

        public double[] Impulses()
        {
            ulong count;
            SteelException.Check(Native.steel_batch_read_impulses(Live(), null, 0, out count));
            var output = new double[count];
            SteelException.Check(Native.steel_batch_read_impulses(Live(), output, count, out count));
            GC.KeepAlive(this);
            return output;
        }

        public double[] Velocities()
        {
            ulong count;
            SteelException.Check(Native.steel_batch_read_velocities(Live(), null, 0, out count));
            var output = new double[count];
            SteelException.Check(Native.steel_batch_read_velocities(Live(), output, count, out count));
            GC.KeepAlive(this);
            return output;
        }

        public WorldStats[] Stats()
        {
            uint count;
            uint size = (uint)Marshal.SizeOf(typeof(WorldStats));
            SteelException.Check(Native.steel_batch_read_world_stats(Live(), size, null, 0, out count));
            var output = new WorldStats[count];
            SteelException.Check(Native.steel_batch_read_world_stats(Live(), size, output, count, out count));
            GC.KeepAlive(this);
            return output;
        }

        public double[] ResidualHistory(uint world)
        {
            uint count;
            SteelException.Check(Native.steel_batch_read_residual_history(Live(), world, null, 0, out count));
            var output = new double[count];
            SteelException.Check(Native.steel_batch_read_residual_history(Live(), world, output, count, out count));
            GC.KeepAlive(this);
            return output;
        }

        public void Dispose()
        {
            Destroy();
            GC.SuppressFinalize(this);
        }

        ~Batch() { Destroy(); }

        void Destroy()
        {
            if (handle.Id == 0) return;
            Native.steel_batch_destroy(handle);
            handle.Id = 0;
        }
    }
}
