// Package boundary has no code: its test holds the project to the import
// rules the packages' doc.go files state ("must not import ..."), one row of
// a table per rule, and fails when a doc.go states a rule the table does not
// check or the table checks a rule no doc.go states.
package boundary
