// Package rpc runs PAC-PFL and the round-based peer methods across
// machines: a server that holds the hyper-posterior's particles (or a peer
// method's global vector) and clients that keep their data, over gRPC.
//
// The server side is a Coordinator whose Proxies are the fl.Clients of an
// unchanged fl.Server loop, so a networked run is the in-process run with
// remote gradients: with every client answering, it is bit-identical to it.
// Federate is the whole server: it listens, waits for the clients, runs a
// training function with them, saves the server's state as it goes and
// stops cleanly when its context is done; the caller decides what ends the
// context (SIGINT and SIGTERM in pacpfl server). The client side is Serve,
// which answers the server's rounds with a local fl.Client built by
// GPClient, BNNClient or CSVClient (or a ClientConfig of the caller's own),
// retrying while the server is away; Participate is the whole client
// process (credentials, connection, Serve).
//
// A server from settings, as pacpfl server runs it: ServerSettings are
// checked and opened (TLS files, the Checkpoint to resume from) before the
// training data are built, then ServerSetup.Federate runs a ServerRun
// whose clients' side DatasetServer (a data set every client regenerates)
// or CSVServer (a CSV file whose rows each client reads from its own
// file) describes. WriteCerts writes a test federation's certificates and
// tokens. Settings the caller got wrong are ConfigErrors.
//
// A peer method (FedAvg, pFedBayes, FedVI, GenFL) runs on the same
// coordinator through its fl.RoundClients: RoundClients are remote ones
// (Fit sends the round's global vector and the client's stream, Evaluate
// asks for the client's score of one of its models), FederateRounds is the
// whole server with an fl.RoundState checkpoint, and a client process
// answers with ClientConfig.NewRound's client; a stateful client keeps its
// state at its last two updates in ClientConfig.StateFile, and the server's
// record of its accepted updates (StateRounds) says which it must be at.
// Package rpc/fedpeer puts a methods.Networked method on it.
//
// Security: the transport is TLS 1.3 (ServerTLS, ClientTLS; GenerateCerts
// makes a test CA), optionally mutual, with client certificates naming
// client ids (ClientCertID); plaintext (Insecure) only on a loopback
// address. A client authenticates with a per-client token (NewToken,
// ReadTokenDir) or its certificate. Until a connection has registered it is
// a stranger: Limits bound how many strangers may connect, from one host
// and in all, what they may send and how long they may take, and refusals
// they cause are logged at a bounded rate. After registration every
// payload is size-limited (MaxPayload), chunked with a CRC-32C per chunk,
// and checked (dimension, finiteness, |ln Z| per sample) before it reaches
// the aggregation, where fl.Config's update filters, quorum and robust rules
// apply. Every text a client sends is cut and escaped before it is logged
// (Clean).
//
// Rounds have deadlines (ServerConfig.RoundTimeout): a client that misses
// one is dropped from the round and its session cut; it may reconnect.
// Concurrency: a Coordinator serves any number of sessions concurrently;
// its methods may be called from any goroutine.
package rpc
