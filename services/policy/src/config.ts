// Policy service configuration (environment variables; see README "Configuration").
import { EnvReader, readBase, readDb, type BaseConfig, type DbConfig } from '@partner/shared/config';

export interface PolicyConfig extends BaseConfig, DbConfig {
  grpcPort: number;
}

export function readPolicyConfig(env = new EnvReader()): Readonly<PolicyConfig> {
  return env.done({
    ...readBase(env, 'policy', 9482),
    ...readDb(env),
    grpcPort: env.int('POLICY_GRPC_PORT', { default: 50052, min: 0, max: 65535 }),
  });
}
