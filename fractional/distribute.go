package fractional

import "math"

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
		return pickV1(hash, weights, total)
	case V2, V3:
		return pickV2(hash, weights, total)
	}
	return -1
}

func pickV1(hash uint32, weights []uint32, total uint32) int {
	// The evaluation order matters for bit-exact agreement with older flagd
	// releases: divide by MaxInt32 first, then scale to a percentage.
	bucket := math.Abs(float64(int32(hash))) / math.MaxInt32 * 100
	end := 0.0
	for i, w := range weights {
		end += 100 * float64(w) / float64(total)
		if bucket < end {
			return i
		}
	}
	return -1
}

func pickV2(hash uint32, weights []uint32, total uint32) int {
	// hash < 2^32, so the product stays below 2^32*total and the shifted
	// value lies in [0, total): exactly uniform up to the hash's own bias.
	bucket := (uint64(hash) * uint64(total)) >> 32
	var end uint64
	for i, w := range weights {
		end += uint64(w)
		if bucket < end {
			return i
		}
	}
	return -1
}
