// Package methods is the catalogue of pacpfl's learning methods: their names,
// table labels, tasks and sources (Lookup, Names, Label), and every method as
// a harness.Method value with its paper's (or cross-validated) default
// options, Validate and a Run that sets the seed's streams, reports its
// rounds and phases to the observer and stops between rounds when its
// context is done:
//
//   - regression (GP clients): PACPFL, PFedGP, Vanilla, Pooled, MTL, MAML,
//     with Polynomial and PV presets;
//   - classification (BNN clients): PACPFLBNN, VanillaBNN, PooledBNN,
//     PFedBayes, FedAvg (FedAvg, FedProx, FedAvg+FT; FedAvgPair shares one
//     training), FedVI, FedVIFedAvg (FedVIFedAvgPair), GenFL, and GenFL's
//     certificate run GenFLBound.
//
// New makes methods by name: New([]string{"pacpfl", "mtl"}, Settings{})
// gives both with their defaults, Settings carries a program's own
// options. BaselineGrid and CrossValidateGrid are the baselines'
// cross-validation.
//
// Adding a method takes two files. One adapter here: a type with Name,
// Validate and Run (calling the method's own package, setting the seed's
// streams, reporting rounds to the observer and returning ctx.Err() when
// the context is done), a Default constructor, a registry entry (name,
// label, tasks, source) and its case in New with a Settings field for its
// options. Every experiment of its task then runs it by name with its
// defaults, and reports and plots find its label here. For flags of its
// own, one flag file in cmd/pacpfl: the flags, their check and their
// conversion to the Settings field, registered for experiment fmnist in
// the file's init (the regression experiments run a new method with its
// defaults).
//
// The registry is fixed at compile time: nothing can change a label while a
// program runs. A Method's Run calls the method's own package, with the
// concurrency that package documents; a pair sharing its training is safe
// for concurrent use, its runs serialised.
package methods

import "slices"

// Task is what a method learns.
type Task string

const (
	// Regression: GP clients (Polynomial, PV, a CSV file), RSMSE and CE.
	Regression Task = "regression"
	// Classification: BNN clients (Fashion-MNIST), accuracy and CE.
	Classification Task = "classification"
)

// Info describes a method.
type Info struct {
	// Name is the method's key on the command line and in reports.
	Name string
	// Label is its name in tables.
	Label string
	// Tasks are the tasks it runs on.
	Tasks []Task
	// Source names the paper the method comes from and, for a baseline,
	// the paper it is compared with (docs/math.md names the papers).
	Source string
}

// registry holds every method in table order: experiment fmnist lists
// its methods in this order.
var registry = []Info{
	{"pacpfl", "PAC-PFL", []Task{Regression, Classification},
		"PAC-PFL (Boroujeni, Krause and Ferrari-Trecate): SVGD on a hyper-posterior over GP or BNN priors"},
	{"pfedgp", "pFedGP", []Task{Regression}, "pFedGP (Achituve et al. 2021) as in PAC-PFL's Table 6"},
	{"mtl", "MTL", []Task{Regression},
		"multi-task learning (Evgeniou & Pontil 2004), federated with personal offsets, PAC-PFL's Table 6"},
	{"maml", "MAML", []Task{Regression}, "MAML as in Fallah et al. (2020), PAC-PFL's Table 6"},
	{"vanilla", "Vanilla", []Task{Regression, Classification},
		"one prior per client fitted on its own data, PAC-PFL's Table 6"},
	{"pooled", "Pooled", []Task{Regression, Classification}, "one prior fitted on the pooled data, PAC-PFL's Table 6"},
	{"genfl", "GenFL (PFL)", []Task{Classification}, "GenFL's personalised learning (Jobic, Haddouche and Guedj 2023)"},
	{"fedvi", "FedVI", []Task{Classification}, "FedVI (Vedadi et al.)"},
	{"fedvi-fedavg", "FedAvg (FedVI's CNN, ReLU after dense 128)", []Task{Classification}, "FedAvg on FedVI's CNN"},
	{"fedvi-fedavg-ft", "FedAvg+FT (FedVI's CNN, ReLU after dense 128)", []Task{Classification},
		"FedAvg with local fine-tuning on FedVI's CNN"},
	{"pfedbayes", "pFedBayes", []Task{Classification}, "pFedBayes (Zhang et al. 2022)"},
	{"fedavg", "FedAvg", []Task{Classification}, "FedAvg (McMahan et al. 2017) on pFedBayes's MLP"},
	{"fedprox", "FedProx", []Task{Classification}, "FedProx (Li et al. 2020) on pFedBayes's MLP"},
	{"fedavg-ft", "FedAvg+FT", []Task{Classification}, "FedAvg with local fine-tuning on pFedBayes's MLP"},
}

// Lookup returns the method named name.
func Lookup(name string) (Info, bool) {
	i := slices.IndexFunc(registry, func(in Info) bool { return in.Name == name })
	if i < 0 {
		return Info{}, false
	}
	in := registry[i]
	in.Tasks = slices.Clone(in.Tasks)
	return in, true
}

// Label is the table label of the method named name, or name itself for a
// method the registry does not know.
func Label(name string) string {
	if in, ok := Lookup(name); ok {
		return in.Label
	}
	return name
}

// Names returns the names of the methods for task t in table order (every
// method if t is empty).
func Names(t Task) []string {
	var out []string
	for _, in := range registry {
		if t == "" || slices.Contains(in.Tasks, t) {
			out = append(out, in.Name)
		}
	}
	return out
}
