package data

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readString(t *testing.T, text string, spec CSVSpec) (*Records, error) {
	t.Helper()
	return ReadCSV(strings.NewReader(text), "d.csv", spec)
}

var regSpec = CSVSpec{ClientColumn: "site", TargetColumn: "y"}

func TestReadCSVBasics(t *testing.T) {
	text := "\uFEFF# a comment\nsite, x1 ,\"x 2\",y\n\n" +
		"a,1,2,3\n" +
		"\"b\", \"4.5\",5e1,-6\n" +
		"a,.5,7.,+8\n"
	r, err := readString(t, text, regSpec)
	require.NoError(t, err)
	assert.Equal(t, []string{"x1", "x 2"}, r.Features)
	assert.Equal(t, "y", r.Target)
	assert.Equal(t, []string{"a", "b"}, r.Clients)
	assert.Equal(t, []int{0, 1, 0}, r.Client)
	assert.Equal(t, []float64{1, 2, 4.5, 50, 0.5, 7}, r.X)
	assert.Equal(t, []float64{3, -6, 8}, r.Y)
	assert.Equal(t, []int{4, 5, 6}, r.Line)
	assert.Equal(t, []float64{4.5, 50}, r.Row(1))
	assert.False(t, r.HasSplit)

	// Features in the order asked, the others ignored.
	r, err = readString(t, text, CSVSpec{ClientColumn: "site", TargetColumn: "y", Features: []string{"x 2"}})
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 50, 7}, r.X)
	assert.Equal(t, []string{"x 2"}, r.Features)
}

func TestReadCSVQuotedMultilineKeepsLines(t *testing.T) {
	text := "site,note,x,y\na,\"two\nlines\",1,2\nb,plain,3,4\n"
	r, err := readString(t, text, CSVSpec{ClientColumn: "site", TargetColumn: "y", Features: []string{"x"}})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4}, r.Line)
	_, err = readString(t, text, regSpec)
	require.Error(t, err) // note is not a number
	assert.Contains(t, err.Error(), `d.csv:2: column "note" (2nd): "two\nlines" is not a number`)
}

func TestReadCSVErrorsNameRowAndColumn(t *testing.T) {
	cases := []struct {
		name, text string
		spec       CSVSpec
		want       string
	}{
		{"empty", "", regSpec, "d.csv: empty file"},
		{"header only", "site,x,y\n", regSpec, "no data rows"},
		{"no client column", "who,x,y\na,1,2\n", regSpec, `no client column "site" (the columns are "who", "x", "y")`},
		{"no target column", "site,x,z\na,1,2\n", regSpec, `no target column "y"`},
		{"duplicate header", "site,x,x,y\na,1,2,3\n", regSpec,
			`d.csv:1: header: column name "x" appears twice (the 2nd and 3rd columns)`},
		{"nameless column", "site,,y\na,1,2\n", regSpec, "d.csv:1: header: the 2nd column has no name"},
		{"short row", "site,x,y\na,1,2\nb,3\n", regSpec, "d.csv:3: 2 fields, the header has 3 columns"},
		{"not a number", "site,x,y\na,1,2\na,1O,3\n", regSpec, `d.csv:3: column "x" (2nd): "1O" is not a number`},
		{"hex", "site,x,y\na,0x10,2\n", regSpec, `"0x10" is not a number`},
		{"underscore", "site,x,y\na,1_000,2\n", regSpec, `"1_000" is not a number`},
		{"infinite", "site,x,y\na,-Inf,2\n", regSpec, `"-Inf" is not finite`},
		{"overflow", "site,x,y\na,1e400,2\n", regSpec, `"1e400" is out of range`},
		{"missing feature", "site,x,y\na,1,2\nb,NA,3\n", regSpec, `d.csv:3: column "x" (2nd): missing value "NA"`},
		{"missing target", "site,x,y\na,1,\n", regSpec, `d.csv:2: column "y" (3rd): missing target ""`},
		{"text target", "site,x,y\na,1,cat\n", regSpec,
			"a regression target must be a number; for class labels use --task classification"},
		{"no client id", "site,x,y\n ,1,2\n", regSpec, `d.csv:2: column "site" (1st): no client ID`},
		{"bare quote", "site,x,y\na,1\"2,3\n", regSpec, "d.csv:2:"},
		{"bad split", "site,x,y,part\na,1,2,dev\n", CSVSpec{ClientColumn: "site", TargetColumn: "y",
			SplitColumn: "part"}, `column "part" (4th): "dev" is neither train nor test`},
		{"bad context", "site,x,y,own\na,1,2,maybe\n",
			CSVSpec{ClientColumn: "site", TargetColumn: "y", ContextColumn: "own"}, `"maybe" is not a context marker`},
		{"feature is target", "site,x,y\na,1,2\n", CSVSpec{ClientColumn: "site", TargetColumn: "y",
			Features: []string{"y"}}, `feature "y" is also the target column`},
		{"feature twice", "site,x,y\na,1,2\n", CSVSpec{ClientColumn: "site", TargetColumn: "y",
			Features: []string{"x", "x"}}, `feature "x" is listed twice`},
		{"unknown feature", "site,x,y\na,1,2\n",
			CSVSpec{ClientColumn: "site", TargetColumn: "y", Features: []string{"z"}}, `no feature column "z"`},
		{"client is target", "site,x,y\na,1,2\n", CSVSpec{ClientColumn: "y", TargetColumn: "y"},
			`column "y" is both the client and the target column`},
		{"no features", "site,y\na,2\n", regSpec, "no feature columns"},
		{"unknown task", "site,x,y\na,1,2\n", CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: "ranking"},
			`unknown task "ranking"`},
		{"unknown class", "site,x,y\na,1,dog\n", CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: Classification,
			Classes: []string{"cat"}}, `class "dog" is not one of the model's classes "cat"`},
		{"all dropped", "site,x,y\na,,2\n", CSVSpec{ClientColumn: "site", TargetColumn: "y", DropMissing: true},
			"every one of the 1 data rows has a missing value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := readString(t, c.text, c.spec)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestReadCSVLongLine(t *testing.T) {
	text := "site,x,y\na,1,2\nb," + strings.Repeat("1", 200) + ",3\n"
	_, err := readString(t, text, CSVSpec{ClientColumn: "site", TargetColumn: "y", MaxLine: 100})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3 is longer than 100 bytes")
	_, err = readString(t, text, CSVSpec{ClientColumn: "site", TargetColumn: "y", MaxLine: 300})
	require.NoError(t, err)
}

func TestReadCSVDropMissing(t *testing.T) {
	text := "site,x,y\na,1,2\na,NaN,3\nb,4,?\nb,5,6\n"
	r, err := readString(t, text, CSVSpec{ClientColumn: "site", TargetColumn: "y", DropMissing: true})
	require.NoError(t, err)
	assert.Equal(t, 2, r.Dropped)
	assert.Equal(t, []float64{1, 5}, r.X)
	assert.Equal(t, []int{2, 5}, r.Line)
}

func TestReadCSVClassificationLabels(t *testing.T) {
	r, err := readString(t, "site,x,y\na,1,dog\na,2,cat\nb,3,dog\nb,4,emu\n",
		CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: Classification})
	require.NoError(t, err)
	assert.Equal(t, []string{"cat", "dog", "emu"}, r.Classes)
	assert.Equal(t, []float64{1, 0, 1, 2}, r.Y)
	// Numeric labels sort as numbers.
	r, err = readString(t, "site,x,y\na,1,10\na,2,9\nb,3,-1\n",
		CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: Classification})
	require.NoError(t, err)
	assert.Equal(t, []string{"-1", "9", "10"}, r.Classes)
	assert.Equal(t, []float64{2, 1, 0}, r.Y)
	// The model's classes fix the indices.
	r, err = readString(t, "site,x,y\na,1,dog\n",
		CSVSpec{ClientColumn: "site", TargetColumn: "y", Task: Classification, Classes: []string{"dog", "cat"}})
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, r.Y)
}

func TestReadCSVPredictionRows(t *testing.T) {
	spec := CSVSpec{ClientColumn: "site", TargetColumn: "y", ContextColumn: "own", TargetOptional: true,
		Features: []string{"x"}}
	r, err := readString(t, "site,x,y,own\na,1,2,yes\na,3,,\nb,4,NA,0\n", spec)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, r.Context)
	assert.Equal(t, 2.0, r.Y[0])
	assert.True(t, math.IsNaN(r.Y[1]) && math.IsNaN(r.Y[2]))
	// A context row needs its target.
	_, err = readString(t, "site,x,y,own\na,1,,1\n", spec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `d.csv:2: column "y" (3rd): missing target`)
	// Without the target column at all, rows to predict are fine, context rows not.
	r, err = readString(t, "site,x,own\na,1,0\n", spec)
	require.NoError(t, err)
	assert.Equal(t, "", r.Target)
	_, err = readString(t, "site,x,own\na,1,1\n", spec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `d.csv:2: a context row needs the target column "y"`)
}

func TestParseNumber(t *testing.T) {
	for s, want := range map[string]float64{"12": 12, "-0.5": -0.5, "1e-3": 1e-3, ".5": 0.5, "5.": 5, "+3E+2": 300} {
		v, err := ParseNumber(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", ".", "e5", "1e", "1e+", "--1", "1.2.3", "0x10", "1_0", "Inf", "nan", " 1", "1,5"} {
		_, err := ParseNumber(s)
		assert.Error(t, err, s)
	}
	// The error says what is wrong, the same for every file pacpfl reads.
	for s, want := range map[string]string{"nan": `"nan" is not finite`, "-Infinity": `"-Infinity" is not finite`,
		"1e400": `"1e400" is out of range`, "0x10": `"0x10" is not a number (plain decimals`} {
		_, err := ParseNumber(s)
		if assert.Error(t, err, s) {
			assert.Contains(t, err.Error(), want)
		}
	}
	v, err := ParseNumber("1e-400") // underflow is a number: 0
	assert.NoError(t, err)
	assert.Equal(t, 0.0, v)
}

// csvFixture is a small regression file: 4 clients, x in 1 feature.
func csvFixture(rowsPerClient map[string]int) string {
	var b strings.Builder
	b.WriteString("client,x,y\n")
	for _, id := range []string{"a", "b", "c", "d"} {
		for i := 0; i < rowsPerClient[id]; i++ {
			x := float64(i)
			b.WriteString(id + "," + ftoa(x) + "," + ftoa(2*x+float64(len(id))) + "\n")
		}
	}
	return b.String()
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestFederateSplitsAndStandardises(t *testing.T) {
	text := csvFixture(map[string]int{"a": 10, "b": 10, "c": 5, "d": 6})
	r, err := readString(t, text, CSVSpec{ClientColumn: "client", TargetColumn: "y"})
	require.NoError(t, err)
	f, err := r.Federate(FederateConfig{NewClients: []string{"d", "c"}, TestFraction: 0.3, Seed: 7})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, f.ExistingIDs)
	assert.Equal(t, []string{"d", "c"}, f.NewIDs, "new clients in the order listed")
	require.Len(t, f.Existing, 2)
	require.Len(t, f.New, 2)
	assert.Len(t, f.ExistingRows[0].Test, 3)
	assert.Len(t, f.ExistingRows[0].Train, 7)
	assert.Len(t, f.NewRows[1].Test, 2) // round(1.5) = 2 of c's 5 rows
	// Deterministic, and a client's split does not depend on the others.
	g, err := r.Federate(FederateConfig{NewClients: []string{"c"}, TestFraction: 0.3, Seed: 7})
	require.NoError(t, err)
	assert.Equal(t, f.ExistingRows[0], g.ExistingRows[0])
	h, err := r.Federate(FederateConfig{NewClients: []string{"d", "c"}, TestFraction: 0.3, Seed: 8})
	require.NoError(t, err)
	assert.NotEqual(t, f.ExistingRows[0].Test, h.ExistingRows[0].Test)
	// Standardisation: pooled existing-client training rows only.
	var xs, ys []float64
	for _, cr := range f.ExistingRows {
		for _, i := range cr.Train {
			xs = append(xs, r.X[i])
			ys = append(ys, r.Y[i])
		}
	}
	mx, sx := meanStd(xs)
	my, sy := meanStd(ys)
	assert.InDelta(t, mx, f.Scaling.XMean[0], 1e-12)
	assert.InDelta(t, sx, f.Scaling.XStd[0], 1e-12)
	assert.InDelta(t, my, f.Scaling.YMean, 1e-12)
	assert.InDelta(t, sy, f.Scaling.YStd, 1e-12)
	// Rows land where the split says, scaled.
	i := f.NewRows[0].Test[0]
	assert.InDelta(t, (r.X[i]-mx)/sx, f.New[0].XTest[0], 1e-12)
	assert.InDelta(t, (r.Y[i]-my)/sy, f.New[0].YTest[0], 1e-12)
	assert.InDelta(t, r.Y[i], f.Scaling.UnscaleY(f.New[0].YTest[0]), 1e-12)
}

func meanStd(v []float64) (m, s float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)))
}

func TestFederateSplitColumn(t *testing.T) {
	text := "client,x,y,part\na,1,1,train\na,2,2,TRAIN\na,3,3,test\nb,1,1,train\nb,2,5,train\nb,4,4,test\n"
	r, err := readString(t, text, CSVSpec{ClientColumn: "client", TargetColumn: "y", SplitColumn: "part"})
	require.NoError(t, err)
	f, err := r.Federate(FederateConfig{TestFraction: 0.9})
	require.NoError(t, err)
	assert.Equal(t, ClientRows{Train: []int{0, 1}, Test: []int{2}}, f.ExistingRows[0])
	assert.Equal(t, ClientRows{Train: []int{3, 4}, Test: []int{5}}, f.ExistingRows[1])
}

func TestFederateErrors(t *testing.T) {
	r, err := readString(t, csvFixture(map[string]int{"a": 10, "b": 3, "c": 1}),
		CSVSpec{ClientColumn: "client", TargetColumn: "y"})
	require.NoError(t, err)
	_, err = r.Federate(FederateConfig{TestFraction: 0.2})
	require.Error(t, err)
	assert.Contains(t, err.Error(),
		`existing client "c" has 1 training row(s) (1 row(s) in all, the first on line 15); a client needs at least 2`)
	_, err = r.Federate(FederateConfig{NewClients: []string{"zz"}})
	assert.ErrorContains(t, err, `new client "zz" is not in d.csv (its clients are "a", "b", "c")`)
	_, err = r.Federate(FederateConfig{NewClients: []string{"a", "a"}})
	assert.ErrorContains(t, err, `new client "a" is listed twice`)
	_, err = r.Federate(FederateConfig{NewClients: []string{"a", "b", "c"}})
	assert.ErrorContains(t, err, "training needs at least one existing client")
	_, err = r.Federate(FederateConfig{TestFraction: 1})
	assert.ErrorContains(t, err, "test fraction 1 must lie in [0, 1)")
	// A split never leaves fewer than MinTrain training rows.
	f, err := r.Federate(FederateConfig{TestFraction: 0.9, MinTrain: 1})
	require.NoError(t, err)
	assert.Len(t, f.ExistingRows[1].Train, 1)
	assert.Len(t, f.ExistingRows[2].Train, 1)
	// Classification needs two classes.
	r, err = readString(t, "client,x,y\na,1,cat\na,2,cat\n",
		CSVSpec{ClientColumn: "client", TargetColumn: "y", Task: Classification})
	require.NoError(t, err)
	_, err = r.Federate(FederateConfig{})
	assert.ErrorContains(t, err, `the target "y" has 1 class(es) "cat"; classification needs at least 2`)
	// Values beyond float64 arithmetic are refused, not standardised to NaN.
	r, err = readString(t, "client,x,y\na,1e300,1\na,-1e300,2\nb,1e300,1\nb,1,1\n",
		CSVSpec{ClientColumn: "client", TargetColumn: "y"})
	require.NoError(t, err)
	_, err = r.Federate(FederateConfig{})
	assert.ErrorContains(t, err, "too large for float64 arithmetic")
}

func TestFederateClassificationKeepsLabels(t *testing.T) {
	text := "client,x,y\na,1,cat\na,2,dog\na,3,cat\nb,1,dog\nb,5,dog\nb,2,cat\n"
	r, err := readString(t, text, CSVSpec{ClientColumn: "client", TargetColumn: "y", Task: Classification})
	require.NoError(t, err)
	f, err := r.Federate(FederateConfig{})
	require.NoError(t, err)
	assert.Equal(t, 2, f.Classes)
	assert.Equal(t, []float64{0, 1, 0}, f.Existing[0].Y)
	assert.Equal(t, 0.0, f.Scaling.YMean)
	assert.Equal(t, 1.0, f.Scaling.YStd)
	mx, sx := meanStd([]float64{1, 2, 3, 1, 5, 2})
	assert.InDelta(t, (5-mx)/sx, f.Existing[1].X[1], 1e-12)
}
