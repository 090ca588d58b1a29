//! Ciphertexts: tuples `(c_0, …, c_{d})` of polynomials over `q`, each
//! ciphertext in **coefficient form** or in **NTT form** (evaluation
//! form), tracked at run time ([`Ciphertext::is_ntt_form`]).
//!
//! NTT form is OpenFHE's choice for BFV and the default here: encryption,
//! relinearization, the fused products and rotations return NTT-form
//! ciphertexts; [`crate::bfv::Evaluator::multiply`] without
//! relinearization returns its degree-2 result in coefficient form (the
//! key switch of `c_2` needs coefficients, and `c_0, c_1` are transformed
//! in the same per-limb pass). Every operation accepts both forms, and
//! [`crate::bfv::Evaluator::transform_to_ntt`] /
//! [`crate::bfv::Evaluator::transform_from_ntt`] convert explicitly. The
//! NTT is a bijection, so both forms give the same coefficient-form
//! results bit for bit.
//!
//! Coefficient form is what every RNS step that is not a product needs
//! (the decryption scalings, the base extensions of both lift-and-scale
//! procedures, the digit decomposition of key switching); products need
//! NTT form. The cost in NTTs of one limb (`k` limbs of `q`, `k'` of the
//! auxiliary base, one digit per limb):
//!
//! | operation | coefficient form (before) | NTT form (now) |
//! |---|---|---|
//! | public-key / secret-key encryption | `3k` / `2k` | `3k` / `2k` |
//! | decryption (size 2) | `2k` | `k` |
//! | `multiply` (no relin.) | `4(k+k') + 3(k+k')` | same, output in coefficient form |
//! | `relinearize` of that output | `k² + 2k` | `k² + 2k` (2k forward of `c_0, c_1`) |
//! | fused `multiply_relin` | `7(k+k') + k² + 2k` | same (the `4k` forward NTTs of the tensor become the `4k` inverse ones of the base extension) |
//! | `multiply_plain` (non-constant, size 2) | `5k` | `k` (plaintext only; `3k` from coefficient form) |
//! | `multiply_plain_ntt` (size 2) | `4k` | `0` (`2k` from coefficient form) |
//! | rotation / `apply_galois` | `k² + 2k` | `k² + k` (either input form) |
//! | `add_plain` / `sub_plain` | `0` | `k` (the NTT of `Δm`) |
//! | `add` / `sub` / `negate` | `0` | `0` (mixed forms: `2k` per coefficient-form polynomial) |
//!
//! A fresh ciphertext has 2 polynomials (degree 1); [`crate::bfv::Evaluator::multiply`]
//! gives 3 (degree 2) until [`crate::bfv::Evaluator::relinearize`].

use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::error::Result;

/// The polynomials of a ciphertext in one of the two forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CtPolys {
    /// Coefficient form.
    Coeff(Vec<RnsPoly<Coeff>>),
    /// NTT (evaluation) form.
    Ntt(Vec<RnsPoly<Ntt>>),
}

impl CtPolys {
    pub(crate) fn len(&self) -> usize {
        match self {
            CtPolys::Coeff(v) => v.len(),
            CtPolys::Ntt(v) => v.len(),
        }
    }

    /// Number of limbs (of the first polynomial; [`CtPolys::check`]
    /// checks that all agree). The level is `limbs − 1`.
    pub(crate) fn limbs(&self) -> usize {
        match self {
            CtPolys::Coeff(v) => v.first().map_or(0, |p| p.limbs()),
            CtPolys::Ntt(v) => v.first().map_or(0, |p| p.limbs()),
        }
    }

    /// Polynomial `i` as a form-tagged reference.
    pub(crate) fn get(&self, i: usize) -> Option<PolyRef<'_>> {
        match self {
            CtPolys::Coeff(v) => v.get(i).map(PolyRef::Coeff),
            CtPolys::Ntt(v) => v.get(i).map(PolyRef::Ntt),
        }
    }

    /// Every polynomial, checked against `ring`.
    pub(crate) fn check(&self, ring: &RnsRing) -> Result<()> {
        match self {
            CtPolys::Coeff(v) => v.iter().try_for_each(|p| ring.check(p))?,
            CtPolys::Ntt(v) => v.iter().try_for_each(|p| ring.check(p))?,
        }
        Ok(())
    }

    /// In NTT form (forward NTT of every polynomial if needed).
    pub(crate) fn into_ntt(self, ring: &RnsRing) -> Result<Vec<RnsPoly<Ntt>>> {
        match self {
            CtPolys::Coeff(v) => convert_all(v, |p| ring.to_ntt(p)),
            CtPolys::Ntt(v) => Ok(v),
        }
    }

    /// Coefficient form, borrowed or inverse-transformed into a copy.
    pub(crate) fn coeff_cow(
        &self,
        ring: &RnsRing,
    ) -> Result<std::borrow::Cow<'_, [RnsPoly<Coeff>]>> {
        match self {
            CtPolys::Coeff(v) => Ok(std::borrow::Cow::Borrowed(v)),
            CtPolys::Ntt(v) => Ok(std::borrow::Cow::Owned(
                v.iter()
                    .map(|p| ring.to_coeff(p.clone()))
                    .collect::<core::result::Result<_, _>>()?,
            )),
        }
    }

    /// In coefficient form (inverse NTT of every polynomial if needed).
    pub(crate) fn into_coeff(self, ring: &RnsRing) -> Result<Vec<RnsPoly<Coeff>>> {
        match self {
            CtPolys::Ntt(v) => convert_all(v, |p| ring.to_coeff(p)),
            CtPolys::Coeff(v) => Ok(v),
        }
    }
}

/// Every polynomial of `v` through the form change `f`.
fn convert_all<A, B>(v: Vec<A>, f: impl Fn(A) -> rnsfhe_math::Result<B>) -> Result<Vec<B>> {
    Ok(v.into_iter().map(f).collect::<rnsfhe_math::Result<_>>()?)
}

/// A borrowed polynomial tagged with its form.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PolyRef<'a> {
    /// Coefficient form.
    Coeff(&'a RnsPoly<Coeff>),
    /// NTT form.
    Ntt(&'a RnsPoly<Ntt>),
}

impl PolyRef<'_> {
    /// Row `l` (in the polynomial's own form).
    pub(crate) fn limb(&self, l: usize) -> &[u64] {
        match self {
            PolyRef::Coeff(p) => p.limb(l),
            PolyRef::Ntt(p) => p.limb(l),
        }
    }

    /// Number of limbs.
    pub(crate) fn limbs(&self) -> usize {
        match self {
            PolyRef::Coeff(p) => p.limbs(),
            PolyRef::Ntt(p) => p.limbs(),
        }
    }

    /// Whether the polynomial is in NTT form.
    pub(crate) fn is_ntt(&self) -> bool {
        matches!(self, PolyRef::Ntt(_))
    }

    /// Checks the shape against `ring`.
    pub(crate) fn check(&self, ring: &RnsRing) -> Result<()> {
        match self {
            PolyRef::Coeff(p) => ring.check(*p)?,
            PolyRef::Ntt(p) => ring.check(*p)?,
        }
        Ok(())
    }
}

/// A BFV ciphertext over `q` in coefficient or NTT form, tagged with its
/// parameter id and the key id of the secret key it decrypts under.
///
/// Equality compares ids, the form and the polynomials (not the
/// compression seed): the same ciphertext in the two forms compares
/// unequal; bring both to one form first
/// ([`crate::bfv::Evaluator::transform_from_ntt`]).
#[derive(Clone, Debug)]
pub struct Ciphertext {
    pub(crate) params_id: u64,
    pub(crate) key_id: u64,
    pub(crate) polys: CtPolys,
    pub(crate) seed: Option<[u8; 32]>,
}

crate::ids::eq_on_ids_and!(Ciphertext: polys);

impl Ciphertext {
    /// A coefficient-form ciphertext.
    pub(crate) fn new(params_id: u64, key_id: u64, polys: Vec<RnsPoly<Coeff>>) -> Self {
        Self {
            params_id,
            key_id,
            polys: CtPolys::Coeff(polys),
            seed: None,
        }
    }

    /// An NTT-form ciphertext.
    pub(crate) fn new_ntt(params_id: u64, key_id: u64, polys: Vec<RnsPoly<Ntt>>) -> Self {
        Self {
            params_id,
            key_id,
            polys: CtPolys::Ntt(polys),
            seed: None,
        }
    }

    /// A ciphertext assembled from NTT-form polynomials (e.g. results
    /// computed by another backend such as rnsfhe-cuda): `polys` are 2 or
    /// more polynomials over the first `l + 1` moduli of `ctx` (one level,
    /// canonical residues), `key_id` the key id of the secret key it
    /// decrypts under. Errors with [`crate::Error::InvalidArgument`] on a
    /// wrong count, shape or unreduced residue.
    pub fn from_ntt_polys(
        ctx: &crate::bfv::BfvContext,
        key_id: u64,
        polys: Vec<RnsPoly<Ntt>>,
    ) -> Result<Self> {
        check_parts(ctx, &polys)?;
        Ok(Self::new_ntt(ctx.id(), key_id, polys))
    }

    /// [`Ciphertext::from_ntt_polys`] for coefficient-form polynomials.
    pub fn from_coeff_polys(
        ctx: &crate::bfv::BfvContext,
        key_id: u64,
        polys: Vec<RnsPoly<Coeff>>,
    ) -> Result<Self> {
        check_parts(ctx, &polys)?;
        Ok(Self::new(ctx.id(), key_id, polys))
    }

    /// Number of polynomials (2 for a fresh or relinearized ciphertext, 3
    /// after a multiplication).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// The level `l`: the ciphertext lives modulo `Q_l = q_0 ⋯ q_l`
    /// (`l + 1` limbs). Fresh ciphertexts are at the top level
    /// ([`crate::bfv::BfvContext::max_level`]);
    /// [`crate::bfv::Evaluator::mod_switch_to_next`] lowers it by one.
    pub fn level(&self) -> usize {
        self.polys.limbs().saturating_sub(1)
    }

    /// Whether the polynomials are stored in NTT (evaluation) form.
    pub fn is_ntt_form(&self) -> bool {
        matches!(self.polys, CtPolys::Ntt(_))
    }

    /// The polynomials `c_0, c_1, …` if the ciphertext is in coefficient
    /// form, `None` if it is in NTT form (see
    /// [`crate::bfv::Evaluator::transform_from_ntt`]).
    pub fn coeff_polys(&self) -> Option<&[RnsPoly<Coeff>]> {
        match &self.polys {
            CtPolys::Coeff(v) => Some(v),
            CtPolys::Ntt(_) => None,
        }
    }

    /// The polynomials `c_0, c_1, …` if the ciphertext is in NTT form
    /// (rows in the bit-reversed order of [`rnsfhe_math::NttTable::forward`]),
    /// `None` if it is in coefficient form.
    pub fn ntt_polys(&self) -> Option<&[RnsPoly<Ntt>]> {
        match &self.polys {
            CtPolys::Ntt(v) => Some(v),
            CtPolys::Coeff(_) => None,
        }
    }

    /// For a fresh secret-key encryption, the 32-byte seed from which
    /// `c_1 = a` is expanded ([`rnsfhe_math::sampling::expand_uniform`],
    /// in coefficient form: an NTT-form ciphertext holds `NTT(a)`);
    /// `None` once `c_1` has been modified or for public-key encryptions.
    /// A serializer can store the seed instead of `c_1`.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }
}

crate::ids::id_accessors!(Ciphertext);

/// Checks the polynomials of [`Ciphertext::from_ntt_polys`]: at least 2,
/// all over the ring of one level, residues reduced.
fn check_parts<R: rnsfhe_math::Representation>(
    ctx: &crate::bfv::BfvContext,
    polys: &[RnsPoly<R>],
) -> Result<()> {
    let first = polys.first().ok_or_else(|| {
        crate::Error::InvalidArgument("a ciphertext needs at least 2 polynomials".into())
    })?;
    if polys.len() < 2 || first.limbs() == 0 {
        return Err(crate::Error::InvalidArgument(
            "a ciphertext needs at least 2 polynomials with at least one limb".into(),
        ));
    }
    let ring = ctx.ring_at(first.limbs() - 1)?;
    for p in polys {
        ring.check_reduced(p)?;
    }
    Ok(())
}
