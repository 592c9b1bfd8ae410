package flagsnap

// Building the source a provider reads from, with that source's
// configuration made from Config in one place.

import "github.com/flagsnap/flagsnap/source"

// newSource builds the source the configuration asks for.
func (p *Provider) newSource() (source.Source, error) {
	switch {
	case p.cfg.source != nil:
		return p.cfg.source, nil
	case p.fixed != nil:
		return p.fixed, nil
	case p.cfg.URL != "":
		return source.NewHTTP(p.httpConfig())
	case p.cfg.Resolver == ResolverFile:
		return source.NewFile(p.fileConfig())
	}
	return source.NewGRPC(p.grpcConfig())
}

// fileConfig is the File source's configuration: the one place where
// Config's fields become FileConfig's.
func (p *Provider) fileConfig() source.FileConfig {
	return source.FileConfig{
		Path:         p.cfg.OfflineFlagSourcePath,
		PollInterval: p.cfg.OfflinePollInterval,
		MaxSize:      int64(p.cfg.MaxMessageSize),
		Logger:       p.log,
	}
}

// httpConfig is the HTTP source's configuration: the one place where
// Config's fields become HTTPConfig's. The deadline bounds each request,
// and the message size the document.
func (p *Provider) httpConfig() source.HTTPConfig {
	c := &p.cfg
	return source.HTTPConfig{
		URL:               c.URL,
		PollInterval:      c.PollInterval,
		Header:            c.HTTPHeader,
		AuthorizationFile: c.AuthorizationFile,
		Client:            c.httpClient,
		CACertPath:        c.CertPath,
		Timeout:           c.Deadline,
		MaxBodySize:       int64(c.MaxMessageSize),
		Logger:            p.log,
	}
}

// grpcConfig is the GRPC source's configuration: the one place where
// Config's fields become GRPCConfig's. The liveness check, which has no
// option, keeps the source's defaults.
func (p *Provider) grpcConfig() source.GRPCConfig {
	c := &p.cfg
	return source.GRPCConfig{
		Host:             c.Host,
		Port:             c.Port,
		TargetURI:        c.TargetURI,
		SocketPath:       c.SocketPath,
		TLS:              c.TLS,
		CACertPath:       c.CertPath,
		Selector:         c.Selector,
		ProviderID:       c.ProviderID,
		Deadline:         c.Deadline,
		StreamDeadline:   c.StreamDeadline,
		RetryBackoff:     c.RetryBackoff,
		RetryBackoffMax:  c.RetryBackoffMax,
		KeepAlive:        c.KeepAlive,
		MaxMessageSize:   c.MaxMessageSize,
		FatalStatusCodes: p.fatalCodes,
		DialOptions:      c.dialOptions,
		Logger:           p.log,
	}
}
