// Package fractional implements the bucketing behind flagd's "fractional"
// targeting operator: a bucketing value is hashed with MurmurHash3 (x86,
// 32-bit, seed 0) and the hash is mapped onto a list of weighted buckets.
//
//	table, err := fractional.NewTable([]float64{50, 30, 20}) // red, green, blue
//	if err != nil {
//		return err
//	}
//	h := fractional.HashDefault(fractional.V2, "banner-color", "user-3")
//	bucket := table.Pick(fractional.V2, h) // 2: "blue"
//
// The package knows nothing about JsonLogic. Callers evaluate the operator's
// arguments themselves and hand over plain values: the bucketing value (or
// the flag key and targeting key when no bucketing expression is given) and
// the bucket weights.
//
// # Versions
//
// Three bucketing algorithms exist, and a deployment must use the same one
// everywhere or users will see different variants from different providers.
//
//   - [V2] is the default and the one to pick unless there is a reason not to:
//     it matches every flagd release deployed today. The bucketing string's
//     UTF-8 bytes are hashed and the bucket is (hash * total) >> 32, an exact
//     integer computation that honours every weight precisely.
//   - [V1] is the legacy algorithm of older flagd releases. It hashes the same
//     bytes but maps the hash to a percentage with float64 arithmetic, which
//     loses precision for large weight totals and, for a few hash values,
//     selects no bucket at all. Use it only to keep old assignments stable.
//   - [V3] keeps the V2 distribution but hashes the deterministic CBOR
//     encoding (RFC 8949, core deterministic) of the bucketing value, so
//     numbers, booleans and objects can be used directly and the integer 1 and
//     the string "1" land in different buckets. Switching to V3 moves almost
//     every user to a new bucket, so adopt it deliberately, for new flags or
//     when a full reshuffle is acceptable.
//
// In V1 and V2 the default bucketing input is flagKey+targetingKey
// concatenated; in V3 it is the CBOR array [flagKey, targetingKey].
//
// V3 hashes the Go value it is given exactly, so that a user lands in the
// same bucket as with a provider in any other language: 64-bit integers
// beyond 2^53, float32 widened exactly, json.Number, named types by their
// kind, times as CBOR tag 1 over epoch seconds, and other values by their
// encoding/json form; [AppendCBOR] lists the rules.
//
// # Typical use
//
// Build a [Table] once for constant weights, hash the bucketing value with
// [HashString], [HashDefault] or [HashValue], and select a bucket with
// [Table.Pick]. Weights computed per evaluation go through [Weight], [Sum]
// and [Pick] instead, which avoid building a table.
//
// To show how a bucket was selected, select it with [Choose] or
// [Table.Choose] instead: the [Choice] holds the point the hash fell on as
// well as the bucket, from the same arithmetic, and [AppendEnds] gives the
// range each bucket covers. [AppendString], [AppendDefault] and
// [AppendCBOR] give the bytes the hash functions hash.
package fractional
