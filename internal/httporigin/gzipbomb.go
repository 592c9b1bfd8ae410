package httporigin

import (
	"bytes"
	"compress/gzip"
)

// GzipBomb is n zero bytes gzipped, about n/1000 bytes: a 1 MiB gzip
// member of zeros, repeated. A gzip stream may hold members one after
// the other, and Go's decoders, the transport's included, read on across
// them; compressing n bytes as one member would take a second under the
// race detector.
func GzipBomb(n int) []byte {
	const member = 1 << 20
	var zipped bytes.Buffer
	// Writing to memory at a valid level cannot fail.
	zw, _ := gzip.NewWriterLevel(&zipped, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, member))
	_ = zw.Close()
	return bytes.Repeat(zipped.Bytes(), n/member)
}
