// Package clustertls makes and loads the certificates that authenticate
// and encrypt a cluster's own connections: clients and routes of its NATS
// servers, and the node-to-node peer link.
//
// A cluster has its own certificate authority (ca.pem, ca.key), made once
// by `backupmon cluster cert`, which also issues each member's certificate
// (NAME.pem, NAME.key) for the host names and addresses the others reach it
// by. Every connection is mutual: both ends present a certificate the
// cluster's authority signed, and the dialling end checks that the other's
// names the host it dialled. The authority's key stays where the
// certificates are made; members hold only ca.pem and their own pair. A
// member reads its pair again when asked (Member.Reload, on SIGHUP), so a
// renewed certificate needs no restart.
package clustertls
