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
