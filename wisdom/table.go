package wisdom

// table holds the tunings measured on the CPUs this project has run on, for
// machines without a wisdom file of their own. An entry applies to any core
// count of its vendor, family, model and level: the blocks follow the
// per-core caches. Each entry is a `pacpfl tune blas` result; its summary
// says what was measured.
var table = []File{
	{
		Version: Version,
		CPU:     CPU{Vendor: "AuthenticAMD", Family: 25, Model: 1, Level: "avx2", Cores: 2},
		GEMM:    GEMM{Kernel: "avx2-6x8", MC: 126, KC: 256, NC: 4096, SharedBMax: 1},
		Tool:    "pacpfl tune blas --budget 120s --n 1000,2000 --reps 3",
		Created: "2026-11-27",
		Summary: "AMD EPYC Zen 3 (2 cores, KVM), three runs: no kernel or block beat the defaults by more " +
			"than the noise (3-18 %); the shared-B schedule lost to the grid at every C side measured " +
			"(0.64-0.99× at 128, 256, 512 and 768 with k = 4·side), so it is never used; Cholesky panel " +
			"widths 64-384 were not faster than 192",
	},
	{
		Version: Version,
		CPU:     CPU{Vendor: "AuthenticAMD", Family: 23, Model: 1, Level: "avx2", Cores: 2},
		GEMM:    GEMM{Kernel: "avx2-6x8", MC: 126, KC: 512, NC: 1024, SharedBMax: 1},
		Tool:    "pacpfl tune blas --budget 120s --n 1000,2000 --reps 3",
		Created: "2026-11-27",
		Summary: "AMD EPYC Zen 1 (Naples, 2 cores, KVM; 128-bit FMA units, peak 40.7 GFLOP/s), two quiet " +
			"runs: KC 512 beat 256 by 1.0-1.2 % (noise 1.0 %) and kept 1.008-1.019× in the final check; " +
			"the 4×12 kernel lost (0.977, 0.996) though alone on L1-resident panels it ran 1.3× the " +
			"6×8; MC 72-480 and NC 2048-8192 within noise; shared-B lost at every C side (0.84-0.97×); " +
			"Cholesky panel widths inconsistent between the runs (128 and 256 within noise of 192)",
	},
}

// lookupTable returns the table's entry for key, or nil.
func lookupTable(key CPU) *File {
	for i := range table {
		c := table[i].CPU
		if c.Vendor == key.Vendor && c.Family == key.Family && c.Model == key.Model && c.Level == key.Level {
			f := table[i]
			return &f
		}
	}
	return nil
}
