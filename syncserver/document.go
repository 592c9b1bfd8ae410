package syncserver

// Document is the flag document a call with selector gets now: what
// FetchAllFlags answers and what a new SyncFlags stream is sent first, so
// that a server of another protocol beside this one serves the same
// selection. err is the gRPC status such a call fails with. version is the
// server's [Server.Version] the document belongs to.
func (s *Server) Document(selector string) (doc string, version uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err = s.documentLocked(Request{Selector: selector})
	return doc, s.version.Load(), err
}

// Version counts the changes of what the server serves: it grows by one
// with each SetFlags, SetSelectorFlags, SetSource, SetSources (however
// many sources it replaces) and SetStatus. Reading it takes no lock, so
// that a caller keeping documents can tell cheaply whether they are still
// current.
func (s *Server) Version() uint64 {
	return s.version.Load()
}

// documentLocked is the document a call for r gets, or the error it fails
// with; Server.mu must be held.
func (s *Server) documentLocked(r Request) (string, error) {
	if err := s.checkLocked(r); err != nil {
		return "", err
	}
	return s.docLocked(selectorOf(r)), nil
}

// changedLocked records a change of what the server serves; Server.mu must
// be held, so that Document's version and document agree.
func (s *Server) changedLocked() {
	s.version.Add(1)
}
