package wisdom

// table holds the tunings measured on the CPUs this project has run on, for
// machines without a wisdom file of their own. An entry applies to any core
// count of its vendor, family, model and level: the blocks follow the
// per-core caches. Each entry is a `pacpfl tune blas` result; its summary
// says what was measured.
var table = []File{}

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
