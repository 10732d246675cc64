package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

// distinctCertificate is a certificate whose every number differs from
// every other's in its first four digits, so that a test can find each
// term in a text by its value.
func distinctCertificate(base float64) fl.Certificate {
	var c fl.Certificate
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Float64:
			f.SetFloat(base + 0.0111*float64(i))
		case reflect.Int:
			f.SetInt(int64(1000*base) + 101*int64(i))
		}
	}
	c.Delta = 0.05
	return c
}

func testCertificates() *fl.GPCertificates {
	return &fl.GPCertificates{
		Clip: 1, Split: fl.Split{A: []int{0, 2, 5}, B: []int{1, 3, 4}}, Existing: distinctCertificate(0.3),
		ExistingMeasured: 0.1271, ExistingDeployed: 0.05432, Delta: 0.05,
		TestSet: testTestSet(),
	}
}

func testTestSet() *fl.TestSetCertificates {
	return &fl.TestSetCertificates{Loss: "clipped_square", Clip: 1, Delta: 0.05,
		Existing:  fl.TestSetTerms{N: 1234, Mean: 0.05321, Delta: 0.05, Bound: 0.05876},
		New:       &fl.TestSetTerms{N: 23, Mean: 0.04123, Delta: 0.05, Bound: 0.2161},
		NewPooled: &fl.TestSetTerms{N: 2345, Mean: 0.04123, Delta: 0.05, Bound: 0.05212}}
}

// terms are the names and printed values (%.4g, %g and %d agree on
// them) of every number of c that the CLI computes: the PAC-Bayes
// certificate's terms and the test-set bounds with their measured losses.
func terms(c *fl.GPCertificates) map[string]string {
	out := map[string]string{}
	add := func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Float64:
				out[prefix+name] = fmt.Sprintf("%.4g", f.Float())
			case reflect.Int:
				out[prefix+name] = fmt.Sprint(f.Int())
			}
		}
	}
	add("Existing.", reflect.ValueOf(c.Existing))
	if ts := c.TestSet; ts != nil {
		add("TestSet.Existing.", reflect.ValueOf(ts.Existing))
		add("TestSet.New.", reflect.ValueOf(*ts.New))
		add("TestSet.NewPooled.", reflect.ValueOf(*ts.NewPooled))
	}
	v := reflect.ValueOf(*c)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		// The run on A as the model is not something train computes.
		if v.Field(i).Kind() == reflect.Float64 && !strings.HasPrefix(name, "PriorModel") {
			out[name] = fmt.Sprintf("%.4g", v.Field(i).Float())
		}
	}
	return out
}

func TestExplainCarriesEveryTerm(t *testing.T) {
	c := testCertificates()
	var b strings.Builder
	WriteCertificateTerms(&b, c)
	got := b.String()
	ts := terms(c)
	require.Greater(t, len(ts), 25)
	for name, val := range ts {
		assert.Contains(t, got, val, "--explain lacks %s = %s", name, val)
	}
	assert.Contains(t, got, "[1 3 4]", "the clients of B")
	assert.Contains(t, got, "[0 2 5]", "the clients of A")
	for _, s := range c.Sentences() {
		assert.Contains(t, got, s)
	}
}

func TestCertificationJSONCarriesEveryTerm(t *testing.T) {
	c := testCertificates()
	ts := c.TestSet
	c.TestSet = nil                 // reported once, in Certification.TestSet
	ts.NewPooled.Bound = math.NaN() // a NaN term is written as null, not lost with the report
	rep := Train{Certification: &Certification{TestSet: ts, Certificates: c, Seconds: 12.5}}
	b, err := Marshal(rep, true)
	require.NoError(t, err)
	var back struct {
		Certification struct {
			TestSet      map[string]any `json:"test_set"`
			Certificates map[string]any `json:"certificates"`
			Seconds      float64        `json:"seconds"`
		} `json:"certification"`
	}
	require.NoError(t, json.Unmarshal(b, &back))
	got := back.Certification.Certificates
	assert.Equal(t, 12.5, back.Certification.Seconds)
	tsj := back.Certification.TestSet
	assert.Equal(t, "clipped_square", tsj["loss"])
	for _, group := range []string{"existing", "new", "new_pooled"} {
		g, ok := tsj[group].(map[string]any)
		require.True(t, ok, "test_set.%s: %s", group, b)
		for _, term := range []string{"n", "mean", "delta", "bound"} {
			assert.Contains(t, g, term, "test_set.%s.%s", group, term)
		}
	}
	assert.Nil(t, tsj["new_pooled"].(map[string]any)["bound"])
	assert.EqualValues(t, 1234, tsj["existing"].(map[string]any)["n"])
	existing, ok := got["existing"].(map[string]any)
	require.True(t, ok, "%s", b)
	ct := reflect.TypeFor[fl.Certificate]()
	cv := reflect.ValueOf(c.Existing)
	for i := range ct.NumField() {
		tag, _, _ := strings.Cut(ct.Field(i).Tag.Get("json"), ",")
		require.NotEmpty(t, tag, "fl.Certificate.%s has no JSON name", ct.Field(i).Name)
		v, ok := existing[tag]
		require.True(t, ok, "the JSON lacks existing.%s", tag)
		want, _ := json.Marshal(cv.Field(i).Interface())
		have, _ := json.Marshal(v)
		assert.JSONEq(t, string(want), string(have), tag)
	}
	gt := reflect.TypeFor[fl.GPCertificates]()
	for i := range gt.NumField() {
		f := gt.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || strings.Contains(opts, "omitempty") {
			continue
		}
		assert.Contains(t, got, tag, "the JSON lacks %s", tag)
	}
}

func TestCertificateLinesSayWhatTheyCover(t *testing.T) {
	c := testCertificates()
	a := CertificateAssumptions(c)
	for _, want := range []string{"i.i.d. clients and samples", "squared error", "clipped at 1", "[0, 1]"} {
		assert.Contains(t, a, want)
	}
	lines := CertificateLines(c)
	require.Len(t, lines, 1)
	for _, want := range []string{"trained model", "clipped sq. error", "(0–1)", "prob. ≥ 95 %",
		fmt.Sprintf("≤ %.3f", c.Existing.Bound), fmt.Sprintf("(measured %.3f)", c.ExistingMeasured),
		"B (3 of 6)"} {
		assert.Contains(t, lines[0], want)
	}
	ts := c.TestSet
	a = TestSetAssumptions(ts)
	for _, want := range []string{"from the test data", "unseen in training", "i.i.d.", "prob. ≥ 95 %"} {
		assert.Contains(t, a, want)
	}
	lines = TestSetLines(ts, "deployed predictor")
	require.Len(t, lines, 2)
	values := []fl.TestSetTerms{ts.Existing, *ts.New}
	for i, l := range lines {
		for _, want := range []string{"deployed predictor", "sq. error clipped at 1",
			fmt.Sprintf("≤ %.3f", values[i].Bound), fmt.Sprintf("(measured %.3f)", values[i].Mean)} {
			assert.Contains(t, l, want, "line %d", i)
		}
	}
	assert.Contains(t, lines[1], fmt.Sprintf("a new client (%d new clients)", ts.New.N))
	ts.Clip = 2
	assert.Contains(t, TestSetLines(ts, "x")[0], "sq. error clipped at 2, /2")
	ts.Loss = "zero_one"
	assert.Contains(t, TestSetLines(ts, "x")[0], "expected 0–1 error ≤ 0.059 (measured 0.053)")
	ts.New = nil // no new clients
	assert.Len(t, TestSetLines(ts, "x"), 1)
}

// shortText is the report of a run with every bound and the certificates.
func shortText() TrainText {
	tr := &fl.Result{Elapsed: 34200 * time.Millisecond, MeanLML: []float64{-1.5, -1.6},
		Privacy: fl.Privacy{Epsilon: math.Inf(1)}}
	res := &fl.MethodResult{
		Bounds: &fl.Bounds{Server: 3.036, NewClient: 8.036, A: -2, B: 2, Delta: 0.05,
			Description: strings.Repeat("a long derivation ", 30)},
		Learned: &fl.LearnedBound{Server: 4.935, EmpiricalTerm: 1.326, A: -2, B: 2, Delta: 0.05,
			DeltaSampling: 0.01, Description: strings.Repeat("a long derivation ", 30)},
	}
	return TrainText{Header: strings.Repeat("every setting ", 20), Setting: "PAC-PFL, GP clients on Polynomial",
		LML: "mean client LML", Train: tr, Existing: RegressionLine(120, 0.422, 0.092),
		New: RegressionLine(24, 0.384, 0.094), Bounds: res,
		Certification: shortCertification()}
}

// shortCertification is a run's certification with --certify: the
// test-set certificates, and the PAC-Bayes one.
func shortCertification() *Certification {
	c := testCertificates()
	ts := c.TestSet
	c.TestSet = nil
	return &Certification{TestSet: ts, Certificates: c, Seconds: 61.5}
}

func TestTrainTextShort(t *testing.T) {
	text := shortText()
	var b strings.Builder
	require.NoError(t, text.WriteText(&b))
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Less(t, len(lines), 20, out)
	for _, l := range lines {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 120, "line too long: %q", l)
	}
	assert.NotContains(t, out, "a long derivation")
	assert.NotContains(t, out, "every setting every")
	for _, want := range []string{"PAC-PFL, GP clients on Polynomial\n", "RSMSE 0.422", "RSMSE 0.384",
		"Thm 4.2, existing clients, exact Gibbs 𝒬* (ln Z^S estimated): ≈ 3.036, prob. ≥ 95 %; vacuous",
		"Lemma 4.6, a new client, exact Gibbs 𝒬* (ln Z^S estimated): ≈ 8.036, prob. ≥ 95 %; vacuous",
		"Thm 4.2, existing clients, trained 𝒬: 4.935, prob. ≥ 94 %; vacuous", CertificateAssumptions(
			text.Certification.Certificates), "certification: 61.5s", "--explain"} {
		assert.Contains(t, out, want)
	}
	for _, l := range append(CertificateLines(text.Certification.Certificates),
		TestSetLines(text.Certification.TestSet, "deployed predictor")...) {
		assert.Contains(t, out, "  "+l+"\n")
	}
	assert.Contains(t, out, TestSetAssumptions(text.Certification.TestSet))
	// A bound below the loss range's top is said to be non-vacuous.
	text.Bounds.Bounds.Server = 1.5
	b.Reset()
	require.NoError(t, text.WriteText(&b))
	assert.Contains(t, b.String(), "≈ 1.5, prob. ≥ 95 %; not vacuous")
}

func TestTrainTextExplain(t *testing.T) {
	text := shortText()
	text.Explain = true
	var b strings.Builder
	require.NoError(t, text.WriteText(&b))
	out := b.String()
	for _, want := range []string{text.Header, text.Bounds.Bounds.Description, text.Bounds.Learned.Description,
		"server-level (Thm 4.2) at 𝒬*:  3.036", "PAC-Bayes certificate in full", "test-set certificates in full"} {
		assert.Contains(t, out, want)
	}
	all := *text.Certification.Certificates
	all.TestSet = text.Certification.TestSet
	for name, val := range terms(&all) {
		assert.Contains(t, out, val, "--explain lacks %s", name)
	}
}

func TestShortPrivacy(t *testing.T) {
	assert.Equal(t, "differential privacy: none (deterministic SVGD; use --dp-epsilon)",
		ShortPrivacy(fl.Privacy{Epsilon: math.Inf(1)}))
	s := ShortPrivacy(fl.Privacy{Mechanism: fl.DPGaussian, Epsilon: 4, NominalEpsilon: 4, Delta: 1e-5,
		SecretNoise: true})
	assert.Equal(t, "differential privacy: (ε = 4, δ = 1e-05) for the released particles (gaussian)", s)
	s = ShortPrivacy(fl.Privacy{Mechanism: fl.DPPaper, Epsilon: 387, NominalEpsilon: 1})
	assert.Contains(t, s, "ε = 387 holds (not the ε = 1 asked for)")
	assert.Contains(t, s, "seeded noise")
}
