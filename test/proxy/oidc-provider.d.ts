// oidc-provider (a dev dependency, the tests' OAuth issuer) ships no types; the tests use a
// handful of its calls (test/proxy/issuer.ts).
declare module "oidc-provider" {
  const Provider: any;
  export default Provider;
}
