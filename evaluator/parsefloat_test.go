package evaluator

import (
	"math"
	"strconv"
	"testing"
)

var parseFloatSeeds = []string{
	"", "+", "-", "0", "-0", "+1", "1.5", ".5", "5.", "1e3", "1E-3", "1e999", "-1e999", "1e-999",
	"0x1p-2", "0X1P+2", "1_000", "0x_1p0", "inf", "+Inf", "-infinity", "INFINITY", "nan", "NaN", "-nan",
	"infx", "nana", "i", "n", "abc", "gold", " 1", "1 ", "1,5", "١", "\xff", "--1", "+-1", "e5", "_1",
}

// parseFloat answers what strconv.ParseFloat does, value and success, for
// numbers, special values and text that is not a number.
func TestParseFloat(t *testing.T) {
	for _, s := range parseFloatSeeds {
		checkParseFloat(t, s)
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range parseFloatSeeds {
		f.Add(s)
	}
	f.Fuzz(checkParseFloat)
}

func checkParseFloat(t *testing.T, s string) {
	want, err := strconv.ParseFloat(s, 64)
	got, ok := parseFloat(s)
	same := got == want || (math.IsNaN(got) && math.IsNaN(want))
	if !same || math.Signbit(got) != math.Signbit(want) || ok != (err == nil) {
		t.Errorf("parseFloat(%q) = %v, %v; strconv: %v, %v", s, got, ok, want, err)
	}
}

// Text that is not a number costs no allocation: rules compare context
// strings with numbers on every evaluation.
func TestParseFloatTextDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { parseFloat("gold") }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
