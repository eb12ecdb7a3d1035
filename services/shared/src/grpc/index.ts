// gRPC plumbing, one module per concern (import from here, as every service does):
// - grpc-loader.ts: proto loading and the service definitions;
// - grpc-server.ts: async handlers (implement), the server with grpc.health.v1 (startGrpcServer);
// - grpc-client.ts: promise clients with a deadline on every call (createClient);
// - grpc-streaming.ts: client- and server-streaming methods, both sides;
// - grpc-readiness.ts: /readyz checks asking a peer's grpc.health.v1;
// - grpc-telemetry.ts: the spans and metrics of every call.
export * from './loader.js';
export * from './server.js';
export * from './client.js';
export * from './streaming-rpc.js';
export * from './readiness.js';
