// Package boundary has no code: its test holds the project (the platform's
// module, bench/'s and hack/mkimage's) to the import rules the packages' doc.go files state,
// both kinds: what a package must not import ("must not import ...") and who
// alone may import it ("Only X imports it"). One row of a table per rule; the
// test fails when a doc.go states a rule the table does not check, the table
// checks a rule no doc.go states, or docs/architecture.md's list of the rules
// differs from the doc.go sentences. It also holds virt-handler to reaching a
// launcher pod's files only through node/podfs (TestNodeFileAccess: a
// vet-style scan of node/ for calls that take a path), and every file of the
// project to naming no registry's or mirror's host (TestNoRegistryHost): what
// the project downloads comes through the host's own configuration.
package boundary
