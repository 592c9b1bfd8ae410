// Package blob reads a provider's flags from object storage: an object in
// Amazon S3 (or a store that speaks its API), Google Cloud Storage or
// Azure Blob Storage, through gocloud.dev's blob drivers. It is a module of
// its own, so that the cloud SDKs stay out of programs that do not use it.
//
//	src, err := blob.Open(ctx, "s3://my-bucket/flags.json?region=eu-west-1")
//	if err != nil {
//		log.Fatal(err)
//	}
//	provider, err := flagsnap.NewProvider(flagsnap.WithSource(src), flagsnap.WithDeadline(10*time.Second))
//	if err != nil {
//		src.Close()
//		log.Fatal(err)
//	}
//	if err := openfeature.SetProviderAndWait(provider); err != nil {
//		log.Fatal(err)
//	}
//	defer openfeature.Shutdown()
//
// The URL's scheme chooses the store: s3://bucket/key, gs://bucket/key or
// azblob://container/key. Its query parameters configure the client as
// gocloud.dev's drivers read them (region, endpoint, use_path_style and
// disable_https for an S3-compatible store; protocol and domain for an
// Azure emulator), and the credentials are those of the environment, found
// the way each SDK finds them: AWS's environment variables, profiles and
// instance roles; Google's application default credentials; Azure's
// AZURE_STORAGE_* variables or its default credential. gocloud.dev reads
// Azure's variables once, at the first azblob:// URL opened in the process.
// STORAGE_EMULATOR_HOST points gs:// URLs at a GCS emulator, without
// credentials.
//
// The source reads the object as soon as the provider starts it, then asks
// for the object's attributes every poll interval ([WithPollInterval], 5s
// by default) and downloads it only when its ETag (or, from a store that
// gives none, its modification time) changed. Each poll is bounded in time
// ([WithTimeout], 10s) and the document in size ([WithMaxSize], 1 GiB).
//
// A provider's Init waits 500ms for the first flags by default, which a
// first request to a cloud store, resolving credentials on the way, may
// not meet: give flagsnap.WithDeadline a few seconds, as above.
//
// An object that cannot be read (missing, refused, not answering) is a
// loss: the provider keeps serving the flags it has, reports STALE at once
// and ERROR after its grace period, and READY when the object can be read
// again. Each failure's message says what to change ([ObjectError]). A
// document that does not parse is rejected and the flags in force stay, as
// with every source.
//
// The source holds its bucket until the provider's Shutdown ends its Run;
// [Source.Close] releases one that never ran.
package blob
