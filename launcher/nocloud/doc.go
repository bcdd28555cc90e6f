// Package nocloud writes cloud-init NoCloud ISOs (through launcher/isoimage): an ISO 9660 image labelled
// cidata holding user-data, meta-data and, when given, network-config. It is
// pure Go, so the launcher image needs no genisoimage.
//
// The file names are plain ISO 9660 names in lower case with a hyphen (no
// Rock Ridge or Joliet); Linux's isofs shows them as user-data etc., which
// is what cloud-init's NoCloud datasource reads.
package nocloud
