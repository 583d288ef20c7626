// Wrong on purpose: cli's code is in strata::cli.
namespace strata::support {
}  // namespace strata::support
