module github.com/flagsnap/flagsnap/ofreptest

go 1.26.0

require (
	github.com/flagsnap/flagsnap v0.0.0
	github.com/open-feature/go-sdk v1.20.0
	github.com/open-feature/go-sdk-contrib/providers/ofrep v0.1.7
)

require (
	buf.build/gen/go/open-feature/flagd/grpc/go v1.6.1-20260217192757-1388a552fc3c.1 // indirect
	buf.build/gen/go/open-feature/flagd/protocolbuffers/go v1.36.11-20260217192757-1388a552fc3c.1 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/twmb/murmur3 v1.2.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/mock v0.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/flagsnap/flagsnap => ../
