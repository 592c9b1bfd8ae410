package fractional

import "math"

// Choice is one selection of a bucket: the hash, the point it falls on and
// the bucket that covers the point, as Choose gives them, so that a caller
// explaining a selection shows the numbers Pick works with instead of
// deriving them beside it, where they could drift apart.
type Choice struct {
	Hash uint32
	// Bucket is the point the hash falls on. In V1 it is the percentage
	// |int32(hash)| / 2147483647 × 100, in [0, 100] and slightly above 100
	// for the three hashes Pick describes; in V2 and V3 it is the integer
	// (hash × total) >> 32, in [0, total). AppendEnds gives the range of
	// points each bucket covers.
	Bucket float64
	// Index is the selected bucket, -1 when none is: Pick's answer.
	Index int
}

// Pick maps hash onto the buckets described by weights and returns the index
// of the winning bucket, or -1 when no bucket is selected. total must be the
// sum of weights as returned by Sum; Pick does not validate it and simply
// selects nothing when it does not fit the weights. An unsupported version
// also selects nothing.
//
// V2 and V3 always select a bucket with a positive weight when total is
// right. V1 reproduces the legacy float64 arithmetic exactly, including its
// flaw: the hashes 0x7fffffff, 0x80000000 and 0x80000001 map to 100% or
// beyond, and rounding can leave the last sliver of the range uncovered; such
// hashes select no bucket.
func Pick(v Version, hash uint32, weights []uint32, total uint32) int {
	if total == 0 {
		return -1
	}
	switch v {
	case V1:
		return indexV1(percentV1(hash), weights, total)
	case V2, V3:
		return indexV2(bucketV2(hash, total), weights)
	}
	return -1
}

// Choose is Pick together with the point the hash falls on, computed by
// the step Pick takes it from. The arguments are as for Pick.
func Choose(v Version, hash uint32, weights []uint32, total uint32) Choice {
	c := Choice{Hash: hash, Index: Pick(v, hash, weights, total)}
	switch v {
	case V1:
		c.Bucket = percentV1(hash)
	case V2, V3:
		c.Bucket = float64(bucketV2(hash, total))
	}
	return c
}

// AppendEnds appends to dst the end of each bucket's range of points, in
// bucket order, and returns the extended buffer: bucket i covers the points
// from the end of bucket i-1 (0 for the first) up to, not including, its
// own end, in the units of Choice.Bucket. The ends are summed as Pick sums
// them, so a Choice's Bucket lies in the range of its Index. For an
// unsupported version or a total of 0, dst is returned unchanged.
func AppendEnds(dst []float64, v Version, weights []uint32, total uint32) []float64 {
	if total == 0 {
		return dst
	}
	switch v {
	case V1:
		var end float64
		for _, w := range weights {
			end += shareV1(w, total)
			dst = append(dst, end)
		}
	case V2, V3:
		var end uint64
		for _, w := range weights {
			end += uint64(w)
			dst = append(dst, float64(end))
		}
	}
	return dst
}

// percentV1 keeps the evaluation order of older flagd releases, which
// bit-exact agreement with them needs: divide by MaxInt32 first, then scale
// to a percentage.
func percentV1(hash uint32) float64 {
	return math.Abs(float64(int32(hash))) / math.MaxInt32 * 100
}

// shareV1 is the percentage of the range a V1 bucket of weight w covers;
// the ends of the buckets are its running sum, rounding included.
func shareV1(w, total uint32) float64 {
	return 100 * float64(w) / float64(total)
}

func indexV1(percent float64, weights []uint32, total uint32) int {
	var end float64
	for i, w := range weights {
		end += shareV1(w, total)
		if percent < end {
			return i
		}
	}
	return -1
}

// bucketV2 is exact: hash < 2^32, so the product stays below 2^32*total
// and the shifted value lies in [0, total), uniform up to the hash's own
// bias.
func bucketV2(hash, total uint32) uint32 {
	return uint32((uint64(hash) * uint64(total)) >> 32)
}

func indexV2(bucket uint32, weights []uint32) int {
	var end uint64
	for i, w := range weights {
		end += uint64(w)
		if uint64(bucket) < end {
			return i
		}
	}
	return -1
}
