package jsonline

import (
	"math"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{map[string]any{"b": 1, "a": "<x & y>"}, `{"a":"<x & y>","b":1}`},
		{[]any{true, nil, 1.5}, `[true,null,1.5]`},
		{"plain", `"plain"`},
		{math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		if got := String(tt.v); got != tt.want {
			t.Errorf("String(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}
