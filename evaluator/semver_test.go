package evaluator

import "testing"

func TestSemverOperators(t *testing.T) {
	cases := []struct {
		a, op, b string
		want     any
	}{
		{"1.2.3", "=", "1.2.3+x", true},
		{"1.2.3", "!=", "1.2.4", true},
		{"1.2.3", "<", "1.10.0", true},
		{"1.2.3", "<=", "1.2.3", true},
		{"2.0.0", ">", "2.0.0-rc.1", true},
		{"2.0.0", ">=", "2.0.1", false},
		{"1.9.9", "^", "1.0.0", true},
		{"2.0.0", "^", "1.0.0", false},
		{"1.2.9", "~", "1.2.0", true},
		{"1.3.0", "~", "1.2.0", false},
		{"1.2.3", "==", "1.2.3", nil},
		{"x", "=", "1.2.3", nil},
	}
	for _, c := range cases {
		got, err := evalRule(t, `{"sem_ver": ["`+c.a+`", "`+c.op+`", "`+c.b+`"]}`, nil)
		if err != nil || got != c.want {
			t.Errorf("%s %s %s: %v (%v), want %v", c.a, c.op, c.b, got, err, c.want)
		}
	}
}
