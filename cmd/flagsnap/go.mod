module github.com/flagsnap/flagsnap/cmd/flagsnap

go 1.26.0

require (
	buf.build/gen/go/open-feature/flagd/grpc/go v1.6.1-20260217192757-1388a552fc3c.1
	buf.build/gen/go/open-feature/flagd/protocolbuffers/go v1.36.11-20260217192757-1388a552fc3c.1
	github.com/flagsnap/flagsnap v0.0.0
	github.com/open-feature/flagd-schemas v0.2.13
	github.com/open-feature/go-sdk v1.20.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/text v0.43.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/twmb/murmur3 v1.2.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/mock v0.6.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The command is built from the library beside it in a checkout. A release
// of the command requires a released flagsnap instead and drops this line:
// go install ...@version refuses a module whose go.mod replaces another.
replace github.com/flagsnap/flagsnap => ../..
