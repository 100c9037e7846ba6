"""Forms of affine expressions the dialects' verifiers need (no irc op here)."""

from xdsl.ir.affine import AffineDimExpr, AffineMap

from irc.ir.index_math import LinearForms, evaluate_map


def linear_coefficients(m: AffineMap) -> list[tuple[list[int], int]] | None:
    """Per result: (coefficient of each dim, constant), when the map is linear in its dims with non-negative
    coefficients and constant (no symbols)."""
    out = []
    for form in evaluate_map(m, LinearForms()):
        if form is None or form[1] < 0 or any(not isinstance(a, AffineDimExpr) or c < 0 for a, c in form[0].items()):
            return None
        out.append(([form[0].get(AffineDimExpr(d), 0) for d in range(m.num_dims)], form[1]))
    return out
