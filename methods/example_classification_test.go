package methods_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/methods"
)

// A classification comparison as experiment fmnist runs it, on small
// synthetic images instead of Fashion-MNIST: pFedBayes and FedAvg by name,
// on the pFedBayes paper's split (each client holds 5 of the 10 labels),
// the mean accuracy over two seeds of their personalised models and of
// their global model on the clients' test images.
func Example_classification() {
	arch := lml.BNN{InH: 6, InW: 6, Hidden: 16}
	pb, fa := pfedbayes.DefaultOptions(), fedavg.DefaultOptions()
	pb.Arch, pb.Rounds, pb.EvalLast, pb.LocalSteps, pb.Batch = arch, 30, 1, 10, 10
	fa.Arch, fa.Rounds, fa.EvalLast, fa.LocalSteps, fa.Batch = arch, 30, 1, 10, 10
	pb.LR1, pb.LR2, fa.LR = 0.01, 0.01, 0.1 // a small network learns faster
	ms, err := methods.New([]string{"pfedbayes", "fedavg"},
		methods.Settings{Task: methods.Classification, PFedBayes: &pb, FedAvg: &fa})
	if err != nil {
		fmt.Println(err)
		return
	}
	images := func(seed uint64) (*data.Dataset, error) {
		return data.Labels5(blobImages(seed, 100),
			data.Labels5Config{Train: 8, Test: 8, Seed: seed, Pixels: data.PixelsUnit})
	}
	exp := harness.Experiment{Data: images, Methods: ms, Seeds: []uint64{1, 2}}
	rep, err := harness.Run(context.Background(), exp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mr := range rep.Methods {
		pm, gm := mr.Summary[harness.ExistingAccuracy].Mean, mr.Summary[harness.GlobalAccuracy].Mean
		fmt.Printf("%s: personalised %s, global model %s\n", methods.Label(mr.Name), percent(pm), percent(gm))
	}
	// Output:
	// pFedBayes: personalised 79%, global model 71%
	// FedAvg: personalised –, global model 100%
}

// percent is x with no decimals, "–" for a method without that model.
func percent(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", x)
}

// blobImages is 10 classes of 6×6 images, perClass of each: a bright
// square at the label's place on a noisy background.
func blobImages(seed uint64, perClass int) *data.Images {
	rng := rand.New(rand.NewPCG(seed, 99))
	im := &data.Images{Name: "blobs", Rows: 6, Cols: 6, Classes: 10}
	for i := 0; i < 10*perClass; i++ {
		label := i % 10
		px := make([]uint8, 36)
		for j := range px {
			px[j] = uint8(rng.IntN(80))
		}
		r, c := label/5*3, label%5
		px[r*6+c], px[(r+1)*6+c], px[r*6+c+1] = 255, 255, 255
		im.Pixels = append(im.Pixels, px...)
		im.Labels = append(im.Labels, uint8(label))
	}
	return im
}
