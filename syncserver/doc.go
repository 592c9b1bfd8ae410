// Package syncserver is a flagd sync server to embed in your own tests and
// examples, and the server behind `flagsnap serve`: a real gRPC server
// implementing flagd.sync.v1.FlagSyncService whose flag sets, sync context,
// metadata and failure modes are set from Go. It lets a provider in
// in-process mode be tried and tested without running the flagd daemon.
//
//	srv, err := syncserver.New(syncserver.WithFlags(doc))
//	if err != nil {
//		t.Fatal(err)
//	}
//	defer srv.Close()
//	if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
//		t.Fatal(err)
//	}
//	provider, err := flagsnap.NewProvider(flagsnap.WithResolver(flagsnap.ResolverInProcess),
//		flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(srv.Port()))
//	// ... once the provider is ready:
//	srv.SetFlags(newDoc) // the provider sends PROVIDER_CONFIGURATION_CHANGED
//
// A test builds a [Server] with [New], starts it with [Server.ListenTCP] or
// [Server.ListenUnix] and points a client at [Server.Addr]. Changing a flag
// set with [Server.SetFlags] or [Server.SetSelectorFlags] pushes it to every
// open stream that serves it, so a client sees the update as it would from
// flagd. [Server.Stop] and [Server.Restart] break and restore the
// connection on the same address, [Server.SetStatus] makes new streams fail
// with a chosen gRPC status, and [Server.SendRaw] sends a payload that is not
// a valid flag set. [Server.Requests] tells what the client asked for,
// including the selector header and the authority it sent. [WithTLS]
// serves TLS with generated certificates, [WithCertificate] with a key pair
// of your own.
//
// Where the flagd daemon differs from a plain echo of a file, the server
// can behave like it: [WithFlagdEncoding] sends flag sets re-encoded as
// flagd sends them ("defaultVariant": "" for none, a "source" per flag,
// $evaluators substituted, no flag-set metadata), [WithStreamDeadline] ends
// streams as flagd's --stream-deadline does, and the server enforces
// grpc-go's default keepalive policy as flagd does ([WithKeepaliveEnforcement]
// changes it). [Server.GoAwayTooManyPings] ends connections as that policy
// does, without the half minute of pings it takes to provoke it, and
// [WithKeepaliveParams] makes the server rotate connections with a GOAWAY.
//
// The selector in force for a call is the flagd-selector header when the
// client sends one, otherwise the request's selector field; a call without
// either gets the default set given with [WithFlags], and a call with one
// gets the set given for that exact selector with [WithSelectorFlags].
//
// A server built with [WithSource] instead serves the way the flagd daemon
// serves its sources: their flags are merged, a later source winning over
// an earlier one, and selectors are read with flagd's syntax
// ("flagSetId=ID", "source=NAME", a bare NAME). [Server.SetSource] replaces
// the flags of one source, [Server.SetSources] those of several at once;
// each stream is sent its selection again, in one message, when it
// changed.
//
// [Server.Document] is the flag document a call with a given selector gets,
// for serving the same selections over another protocol, and
// [Server.Version] tells when documents taken earlier may be out of date.
package syncserver
