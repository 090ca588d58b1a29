//! The common reference string of a protocol run: a public 32-byte seed
//! every party expands to the same uniform polynomial `a` (Mouchet et al.
//! 2021 §4.1, Lattigo's `CRS`), and the instance id that tags every share
//! of the run.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use rnsfhe_math::sampling::{expand_uniform, rng_from_os};
use rnsfhe_math::{Coeff, Ntt, RnsPoly, RnsRing};

use crate::error::Result;
use crate::multiparty::parties::ShareTag;

/// The ChaCha20 stream of the instance id (stream 0 expands `a`).
const INSTANCE_STREAM: u64 = u64::from_le_bytes(*b"rnsfheID");

/// A public seed shared by all parties of one protocol run. Never reuse
/// one for two runs: the shares of both would use the same `a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommonReferenceString {
    seed: [u8; 32],
}

impl CommonReferenceString {
    /// A fresh seed from the operating system (one party draws it and
    /// sends it to the others, or a beacon provides it).
    pub fn generate() -> Result<Self> {
        let mut seed = [0u8; 32];
        rng_from_os()?.fill_bytes(&mut seed);
        Ok(Self { seed })
    }

    /// The string of an agreed seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self { seed }
    }

    /// The seed.
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    /// The id of this protocol run (a public tag derived from the seed,
    /// from another ChaCha20 stream than `a`); the collective public key
    /// carries it as its key id.
    pub fn instance_id(&self) -> u64 {
        let mut rng = ChaCha20Rng::from_seed(self.seed);
        rng.set_stream(INSTANCE_STREAM);
        rng.next_u64()
    }

    /// The tag of `party`'s share in this run of `protocol` under the
    /// parameter id `params_id`.
    pub(crate) fn share_tag(&self, params_id: u64, protocol: &'static str, party: u32) -> ShareTag {
        ShareTag::new(params_id, protocol, self.instance_id(), party)
    }

    /// `a = expand_uniform(seed)` over `ring`, in NTT form: the `a` of a
    /// public key generated from this seed (so the collective key can be
    /// stored seed-compressed like any other).
    pub fn polynomial(&self, ring: &RnsRing) -> Result<RnsPoly<Ntt>> {
        let a: RnsPoly<Coeff> = expand_uniform(&self.seed, ring.base(), ring.n());
        Ok(ring.to_ntt(a)?)
    }

    /// `count` uniform polynomials over `ring` in NTT form, one per
    /// key-switching digit, from the ChaCha20 stream `stream` of the seed
    /// (one stream per protocol, so that two protocols run on the same
    /// string never share an `a_j`; independent of
    /// [`CommonReferenceString::polynomial`], stream 0): polynomial `j`
    /// expands the `j`-th 32-byte seed of that stream.
    pub(crate) fn polynomials(
        &self,
        ring: &RnsRing,
        count: usize,
        stream: u64,
    ) -> Result<Vec<RnsPoly<Ntt>>> {
        let mut rng = ChaCha20Rng::from_seed(self.seed);
        rng.set_stream(stream);
        (0..count)
            .map(|_| {
                let mut seed = [0u8; 32];
                rng.fill_bytes(&mut seed);
                let a: RnsPoly<Coeff> = expand_uniform(&seed, ring.base(), ring.n());
                Ok(ring.to_ntt(a)?)
            })
            .collect()
    }
}
