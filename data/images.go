package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Images is a pool of labelled greyscale images, the input of the federated
// splits (Labels5, Dirichlet). Pixels stay uint8 as stored in the files
// (70,000 Fashion-MNIST images take 55 MB, not 439 MB); a split converts the
// images it hands to clients to float64 pixel/255.
type Images struct {
	Name       string
	Rows, Cols int
	Classes    int     // labels are 0..Classes−1
	Pixels     []uint8 // N × Rows·Cols, image after image, each row-major
	Labels     []uint8 // N
}

// N is the number of images.
func (im *Images) N() int { return len(im.Labels) }

// D is the number of pixels of one image.
func (im *Images) D() int { return im.Rows * im.Cols }

// Validate checks the shapes and that every label is below Classes.
func (im *Images) Validate() error {
	switch {
	case im.Rows < 1 || im.Cols < 1:
		return fmt.Errorf("%s: image size %d×%d", im.Name, im.Rows, im.Cols)
	case im.Classes < 1 || im.Classes > 256:
		return fmt.Errorf("%s: %d classes, want 1..256", im.Name, im.Classes)
	case len(im.Pixels) != im.N()*im.D():
		return fmt.Errorf("%s: %d pixels for %d images of %d×%d", im.Name, len(im.Pixels), im.N(), im.Rows, im.Cols)
	}
	for i, l := range im.Labels {
		if int(l) >= im.Classes {
			return fmt.Errorf("%s: image %d has label %d, want 0..%d", im.Name, i, l, im.Classes-1)
		}
	}
	return nil
}

// LoadIDXImages reads an IDX image file (N × rows × cols unsigned bytes,
// magic 0x00000803) and its IDX label file (N unsigned bytes, magic
// 0x00000801), gzip-compressed or raw, and checks them against each other.
// Every label must be below classes.
func LoadIDXImages(imagesPath, labelsPath string, classes int) (*Images, error) {
	img, err := ReadIDXFile(imagesPath)
	if err != nil {
		return nil, err
	}
	lab, err := ReadIDXFile(labelsPath)
	if err != nil {
		return nil, err
	}
	if len(img.Dims) != 3 {
		return nil, fmt.Errorf("%s: %w: %d dimensions %v, an image file has 3 (images × rows × cols)", imagesPath,
			ErrIDXDims, len(img.Dims), img.Dims)
	}
	if len(lab.Dims) != 1 {
		return nil,
			fmt.Errorf("%s: %w: %d dimensions %v, a label file has 1", labelsPath, ErrIDXDims, len(lab.Dims), lab.Dims)
	}
	if img.Dims[0] != lab.Dims[0] {
		return nil,
			fmt.Errorf("%s holds %d images but %s holds %d labels", imagesPath, img.Dims[0], labelsPath, lab.Dims[0])
	}
	im := &Images{Name: imagesPath, Rows: img.Dims[1], Cols: img.Dims[2], Classes: classes, Pixels: img.Data,
		Labels: lab.Data}
	for i, l := range im.Labels {
		if int(l) >= classes {
			return nil, fmt.Errorf("%s: label %d of image %d is not a class 0..%d", labelsPath, l, i, classes-1)
		}
	}
	return im, im.Validate()
}

// Fashion-MNIST as Debian's dataset-fashion-mnist package installs it.
const (
	FashionMNISTDebianDir = "/usr/share/datasets/fashion-mnist"
	FashionMNISTPackage   = "dataset-fashion-mnist"
	// DataDirEnv overrides FashionMNISTDebianDir (a --data-dir flag
	// overrides both).
	DataDirEnv = "PACPFL_DATA"
)

// fashionFiles are the four files, training images and labels then test.
var fashionFiles = [4]string{
	"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
	"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
}

// FashionMNISTDir resolves the directory of the Fashion-MNIST files: dir
// when not empty (the CLI's --data-dir), else $PACPFL_DATA when set, else
// FashionMNISTDebianDir. A directory that lacks the files but has a
// fashion-mnist subdirectory stands for that subdirectory, so either the
// files' own directory or a root of several data sets may be given.
func FashionMNISTDir(dir string) string {
	if dir == "" {
		dir = os.Getenv(DataDirEnv)
	}
	if dir == "" {
		return FashionMNISTDebianDir
	}
	if _, err := os.Stat(filepath.Join(dir, fashionFiles[0])); err != nil {
		sub := filepath.Join(dir, "fashion-mnist")
		if _, err := os.Stat(filepath.Join(sub, fashionFiles[0])); err == nil {
			return sub
		}
	}
	return dir
}

// FashionMNIST loads the 70,000 Fashion-MNIST images (28×28, 10 classes),
// the 60,000 of the training files followed by the 10,000 of the test
// files: the splits pool them (docs/math.md §3). dir is resolved by
// FashionMNISTDir. A missing file is an error that names it and the Debian
// package, flag and environment variable that provide it.
func FashionMNIST(dir string) (*Images, error) {
	dir = FashionMNISTDir(dir)
	var path [4]string
	for i, f := range fashionFiles {
		path[i] = filepath.Join(dir, f)
		if _, err := os.Stat(path[i]); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("fashion-mnist: %s is missing: install it with 'apt-get install %s', or point "+
				"--data-dir or %s at a directory holding %v: %w",
				path[i], FashionMNISTPackage, DataDirEnv, fashionFiles, err)
		}
	}
	train, err := LoadIDXImages(path[0], path[1], 10)
	if err != nil {
		return nil, fmt.Errorf("fashion-mnist: %w", err)
	}
	test, err := LoadIDXImages(path[2], path[3], 10)
	if err != nil {
		return nil, fmt.Errorf("fashion-mnist: %w", err)
	}
	for _, im := range []*Images{train, test} {
		if im.Rows != 28 || im.Cols != 28 {
			return nil, fmt.Errorf("fashion-mnist: %s holds %d×%d images, want 28×28", im.Name, im.Rows, im.Cols)
		}
	}
	return &Images{
		Name: "fmnist", Rows: 28, Cols: 28, Classes: 10,
		Pixels: append(train.Pixels, test.Pixels...),
		Labels: append(train.Labels, test.Labels...),
	}, nil
}
