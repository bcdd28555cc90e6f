// Package boundary has no code: its test holds the project to the import
// rules the packages' doc.go files state ("must not import ..."), one row of
// a table per rule, and fails when a doc.go states a rule the table does not
// check or the table checks a rule no doc.go states. It also holds
// virt-handler to reaching a launcher pod's files only through node/podfs
// (TestNodeFileAccess: a vet-style scan of node/ for calls that take a path).
package boundary
