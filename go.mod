module github.com/flagsnap/flagsnap

go 1.26.0

require (
	github.com/diegoholiveira/jsonlogic/v3 v3.9.1
	github.com/fxamacker/cbor/v2 v2.9.6
	github.com/twmb/murmur3 v1.2.2
	github.com/x448/float16 v0.8.4
	go.yaml.in/yaml/v3 v3.0.6
)

require github.com/stretchr/testify v1.12.1 // indirect
