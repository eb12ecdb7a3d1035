// gRPC plumbing, one module per concern (import from here, as every service does):
// - loader.ts: proto loading and the service definitions;
// - server.ts: async handlers (implement), the server with grpc.health.v1 (startGrpcServer);
// - client.ts: promise clients with a deadline on every call (createClient);
// - streaming-rpc.ts: client- and server-streaming methods, both sides;
// - readiness.ts: /readyz checks asking a peer's grpc.health.v1;
// - telemetry.ts: the spans and metrics of every call (used by server.ts, client.ts and streaming-rpc.ts; not exported here);
// - call-stream.ts: the hot unary calls as messages on open streams (used by client.ts and server.ts).
export * from './loader.js';
export * from './server.js';
export * from './client.js';
export * from './streaming-rpc.js';
export * from './readiness.js';
