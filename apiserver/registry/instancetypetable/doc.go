// Package instancetypetable prints instancetypes and preferences, of both
// scopes, for `kubectl get`: the two kinds of each pair share a spec, so
// they share their columns. It must not import any client.
package instancetypetable
