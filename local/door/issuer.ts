/**
 * A local token issuer standing for the operator's OIDC issuer: an ES256 key pair made at start,
 * tokens for any user, and the check API Gateway's JWT authorizer makes before the function runs
 * (signature, `iss`, `aud`, `exp`, `nbf`; docs/api.md, "Authorizer").
 */
import { generateKeyPair, jwtVerify, SignJWT, type JWTPayload } from 'jose';

export interface LocalIssuer {
  issuer: string;
  audience: string;
  /** A token for `sub` signed with this issuer's key, valid for `seconds` (default 12 hours); `iss` and `aud` may be overridden (tests). */
  token(sub: string, seconds?: number, claims?: { issuer?: string; audience?: string }): Promise<string>;
  /** The verified claims, or undefined for a token the authorizer would refuse. */
  verify(token: string): Promise<JWTPayload | undefined>;
}

export const LOCAL_AUDIENCE = 'contest-sync-local';

export async function startLocalIssuer(issuer: string, audience = LOCAL_AUDIENCE): Promise<LocalIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return {
    issuer,
    audience,
    token: (sub, seconds = 12 * 3600, claims = {}) =>
      new SignJWT({ scope: 'reminders' })
        .setProtectedHeader({ alg: 'ES256', kid: 'local' })
        .setSubject(sub)
        .setIssuer(claims.issuer ?? issuer)
        .setAudience(claims.audience ?? audience)
        .setIssuedAt()
        .setExpirationTime(`${seconds}s`)
        .sign(privateKey),
    async verify(token) {
      try {
        return (await jwtVerify(token, publicKey, { issuer, audience, algorithms: ['ES256'] })).payload;
      } catch {
        return undefined;
      }
    },
  };
}
