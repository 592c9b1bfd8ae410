package fractional

import (
	"strings"
	"testing"
)

var (
	benchHash uint32
	benchIdx  int
)

func BenchmarkHashString(b *testing.B) {
	s := strings.Repeat("0123456789", 4)
	for _, v := range []Version{V1, V2, V3} {
		b.Run(v.String(), func(b *testing.B) {
			b.ReportAllocs()
			var h uint32
			for b.Loop() {
				h += HashString(v, s)
			}
			benchHash = h
		})
	}
}

func BenchmarkHashDefault(b *testing.B) {
	for _, v := range []Version{V1, V2, V3} {
		b.Run(v.String(), func(b *testing.B) {
			b.ReportAllocs()
			var h uint32
			for b.Loop() {
				h += HashDefault(v, "fractional-flag-shorthand", "jon@company.com")
			}
			benchHash = h
		})
	}
}

func BenchmarkHashValueV3(b *testing.B) {
	inputs := []struct {
		name string
		x    any
	}{
		{"int", int64(123456789)},
		{"float", 1.23},
		{"map", map[string]any{"id": "user-1", "tier": "gold", "age": 42.0, "beta": true}},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			var h uint32
			for b.Loop() {
				v, _ := HashValue(V3, in.x)
				h += v
			}
			benchHash = h
		})
	}
}

func BenchmarkPick(b *testing.B) {
	tables := []struct {
		name    string
		weights []uint32
	}{
		{"2buckets", []uint32{50, 50}},
		{"8buckets", []uint32{10, 10, 10, 10, 10, 10, 20, 20}},
	}
	for _, tc := range tables {
		total, err := Sum(tc.weights)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range []Version{V1, V2, V3} {
			b.Run(tc.name+"/"+v.String(), func(b *testing.B) {
				b.ReportAllocs()
				var idx int
				h := uint32(0x9e3779b9)
				for b.Loop() {
					idx += Pick(v, h, tc.weights, total)
					h += 0x9e3779b9
				}
				benchIdx = idx
			})
		}
	}
}
