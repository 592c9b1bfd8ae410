// Package bench holds flagsnap's benchmark matrix and nothing else: the
// evaluation rows (E1–E11), the custom operators (O1–O6), loading and
// updating flag sets (S1–S9), memory held per flag (M1–M4) and concurrency
// (C1–C4), each measured at the provider's methods and, for evaluations,
// through an OpenFeature client, next to a floor provider that does no
// more than an atomic load, a map lookup and a precomputed answer.
//
// Benchmarks whose names end in NoAlloc must not allocate; the CI run
// fails if one does. Run the matrix with
//
//	go test -run '^$' -bench . -count 10 ./bench/ | tee new.txt
//	benchstat old.txt new.txt
package bench
