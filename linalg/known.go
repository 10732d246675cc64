package linalg

// KnownBackends returns every backend name pacpfl knows, whether or not it
// is compiled into this binary (see Backends for those that are). A name
// outside this list is a typo; one inside it but not in Backends needs a
// different build.
func KnownBackends() []string { return append([]string(nil), knownBackends...) }
