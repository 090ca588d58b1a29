//! Round trips of every CKKS object (parameters, plaintexts, ciphertexts,
//! and the RLWE keys under a CKKS context with hybrid key-switching keys)
//! in both forms, exact sizes, and the load errors of the CKKS loaders.

mod common;

use common::assert_err;
mod ser_common;

use ser_common::{assert_format_err, fmt_err};

use std::sync::Arc;

use rnsfhe::bfv::BfvContext;
use rnsfhe::ckks::{
    Ciphertext, CkksContext, CkksParameters, Decryptor, Evaluator, GaloisKeys, Plaintext,
    PublicKey, RelinKey, SecretKey,
};
use rnsfhe::rlwe::KeySwitchingKey;
use rnsfhe::serialization::{
    inspect, ring_poly_bits, FormatError, FromBytes, ObjectKind, ToBytes, CHECKSUM_LEN,
    CKKS_PREFIX_LEN, HEADER_LEN, SEED_LEN,
};
use rnsfhe::{Error, SecurityLevel};
use ser_common::{
    ckks_fixture, ckks_params, ckks_params_dnum2, poke_bits, reseal, with_byte, with_u32,
    CkksFixture,
};

fn fixture() -> CkksFixture {
    ckks_fixture(ckks_params(), 21)
}

/// Bits of one packed polynomial at `level`.
fn level_bits(ctx: &CkksContext, level: usize) -> u64 {
    ring_poly_bits(ctx.ring_at(level).unwrap())
}

/// Bits of one packed polynomial over `Q·P`.
fn qp_bits(ctx: &CkksContext) -> u64 {
    ring_poly_bits(KeySwitchingKey::key_ring(ctx))
}

fn framed(payload: u64) -> usize {
    HEADER_LEN + payload as usize + CHECKSUM_LEN
}

// ------------------------------------------------------------ round trips

#[test]
fn parameters_round_trip() {
    let secure192 = CkksParameters::builder()
        .degree(8192)
        .coeff_moduli_bits(&[40, 30, 30])
        .key_switching_moduli_bits(&[40])
        .dnum(3)
        .security(SecurityLevel::Tc192)
        .sigma(3.5)
        .build()
        .unwrap();
    for p in [
        ckks_params(),
        ckks_params_dnum2(),
        secure192,
        CkksParameters::for_depth(2, 40, 60).build().unwrap(),
    ] {
        let bytes = p.to_bytes().unwrap();
        let h = inspect(&bytes).unwrap();
        assert_eq!(h.kind, ObjectKind::CkksParameters);
        assert_eq!(h.params_id, p.id());
        assert_eq!(h.count as usize, p.coeff_moduli().len());
        let k = p.coeff_moduli().len() + p.key_switching_moduli().len();
        assert_eq!(bytes.len(), framed(32 + 8 * k as u64));
        let q = CkksParameters::from_bytes(&bytes).unwrap();
        assert_eq!(q, p);
        assert_eq!(q.to_bytes().unwrap(), bytes);
        // A CKKS parameter file is not a BFV one, and vice versa.
        assert_format_err!(
            rnsfhe::bfv::BfvParameters::from_bytes(&bytes),
            FormatError::WrongKind { .. }
        );
    }
    let bfv = ser_common::params(None).to_bytes().unwrap();
    assert_eq!(
        fmt_err(CkksParameters::from_bytes(&bfv)),
        FormatError::WrongKind {
            expected: ObjectKind::CkksParameters,
            found: ObjectKind::Parameters
        }
    );
}

#[test]
fn keys_round_trip_with_hybrid_key_switching() {
    for params in [ckks_params(), ckks_params_dnum2()] {
        let f = ckks_fixture(params, 3);
        let ctx = &f.ctx;
        let n = ctx.degree() as u64;
        let dnum = ctx.params().dnum();
        assert_eq!(KeySwitchingKey::pairs_for(ctx), dnum);
        // Secret key: 2 bits per coefficient, flagged secret.
        let b = f.sk.to_bytes(ctx).unwrap();
        assert_eq!(b.len(), framed(n / 4));
        assert!(inspect(&b).unwrap().secret);
        let sk = SecretKey::from_bytes(ctx, &b).unwrap();
        assert_eq!(sk.coefficients(), f.sk.coefficients());
        assert_eq!(sk.key_id(), f.sk.key_id());
        // Public key over Q·P (encryption divides by P).
        let full = f.pk.to_bytes(ctx).unwrap();
        let comp = f.pk.to_bytes_compressed(ctx).unwrap();
        let pk_bits = qp_bits(ctx);
        assert_eq!(full.len(), framed((2 * pk_bits).div_ceil(8)));
        assert_eq!(comp.len(), framed(32 + pk_bits.div_ceil(8)));
        for b in [&full, &comp] {
            let pk = PublicKey::from_bytes(ctx, b).unwrap();
            assert_eq!(pk, f.pk);
            assert!(pk.to_bytes_smallest(ctx).unwrap() == *b);
        }
        assert!(!PublicKey::from_bytes(ctx, &full).unwrap().is_compressible());
        // Relinearization key: dnum pairs over Q·P.
        let full = f.rk.to_bytes(ctx).unwrap();
        let comp = f.rk.to_bytes_compressed(ctx).unwrap();
        let bits = qp_bits(ctx);
        assert_eq!(inspect(&full).unwrap().count as usize, dnum);
        assert_eq!(full.len(), framed((2 * dnum as u64 * bits).div_ceil(8)));
        assert_eq!(
            comp.len(),
            framed(32 * dnum as u64 + (dnum as u64 * bits).div_ceil(8))
        );
        for b in [&full, &comp] {
            let rk = RelinKey::from_bytes(ctx, b).unwrap();
            assert!(rk.key_switching_key().is_hybrid());
            assert_eq!(rk, f.rk);
            assert_eq!(rk.to_bytes(ctx).unwrap(), full);
        }
        assert!(!RelinKey::from_bytes(ctx, &full).unwrap().is_compressible());
        assert_format_err!(
            RelinKey::from_bytes(ctx, &full)
                .unwrap()
                .to_bytes_compressed(ctx),
            FormatError::NotCompressible { .. }
        );
        // Galois keys: two elements.
        let full = f.gk.to_bytes(ctx).unwrap();
        let comp = f.gk.to_bytes_compressed(ctx).unwrap();
        assert_eq!(
            full.len(),
            framed(16 + (4 * dnum as u64 * bits).div_ceil(8))
        );
        assert_eq!(
            comp.len(),
            framed(16 + 64 * dnum as u64 + (2 * dnum as u64 * bits).div_ceil(8))
        );
        for b in [&full, &comp] {
            let gk = GaloisKeys::from_bytes(ctx, b).unwrap();
            assert_eq!(gk, f.gk);
            assert!(gk.to_bytes(ctx).unwrap() == full);
            assert!(gk.to_bytes_smallest(ctx).unwrap() == *b);
        }
        // Loaded keys work: the evaluator gives identical results.
        let ev = Evaluator::new(ctx);
        let rk = RelinKey::from_bytes(ctx, &f.rk.to_bytes_compressed(ctx).unwrap()).unwrap();
        let gk = GaloisKeys::from_bytes(ctx, &f.gk.to_bytes(ctx).unwrap()).unwrap();
        assert_eq!(
            ev.relinearize(&f.ct3, &rk).unwrap(),
            ev.relinearize(&f.ct3, &f.rk).unwrap()
        );
        assert_eq!(
            ev.rotate(&f.ct_pk, 1, &gk).unwrap(),
            ev.rotate(&f.ct_pk, 1, &f.gk).unwrap()
        );
        assert_eq!(
            ev.conjugate(&f.ct_sk, &gk).unwrap(),
            ev.conjugate(&f.ct_sk, &f.gk).unwrap()
        );
    }
}

#[test]
fn plaintexts_round_trip_at_every_level() {
    let f = fixture();
    let ctx = &f.ctx;
    let ev = Evaluator::new(ctx);
    let pt0 = ev.drop_plain_to_level(&f.pt, 0).unwrap();
    for (pt, level) in [(&f.pt, 2usize), (&f.pt_low, 1), (&pt0, 0)] {
        assert_eq!(pt.level(), level);
        let b = pt.to_bytes(ctx).unwrap();
        let h = inspect(&b).unwrap();
        assert_eq!(h.kind, ObjectKind::CkksPlaintext);
        assert_eq!((h.count, h.key_id, h.secret), (1, 0, false));
        assert_eq!(
            b.len(),
            framed(CKKS_PREFIX_LEN as u64 + level_bits(ctx, level).div_ceil(8))
        );
        let back = Plaintext::from_bytes(ctx, &b).unwrap();
        assert_eq!(&back, pt);
        assert_eq!(back.scale().to_bits(), pt.scale().to_bits());
        assert_eq!(back.len(), pt.len());
        assert_eq!(back.to_bytes(ctx).unwrap(), b);
        assert_format_err!(
            pt.to_bytes_compressed(ctx),
            FormatError::NotCompressible { .. }
        );
    }
}

#[test]
fn ciphertexts_round_trip_in_both_forms() {
    let f = fixture();
    let ctx = &f.ctx;
    let dec = Decryptor::new(ctx, &f.sk).unwrap();
    for (ct, compressible) in [
        (&f.ct_pk, false),
        (&f.ct_sk, true),
        (&f.ct_sk_low, true),
        (&f.ct3, false),
        (&f.ct_rescaled, false),
    ] {
        let level = ct.level();
        let bits = level_bits(ctx, level);
        let full = ct.to_bytes(ctx).unwrap();
        let h = inspect(&full).unwrap();
        assert_eq!(h.kind, ObjectKind::CkksCiphertext);
        assert_eq!(h.count as usize, ct.size());
        assert_eq!(h.key_id, f.sk.key_id());
        assert_eq!(
            full.len(),
            framed(CKKS_PREFIX_LEN as u64 + (ct.size() as u64 * bits).div_ceil(8))
        );
        let back = Ciphertext::from_bytes(ctx, &full).unwrap();
        assert_eq!(back.polys(), ct.polys());
        assert_eq!(back.scale().to_bits(), ct.scale().to_bits());
        assert_eq!(
            (back.len(), back.level(), back.key_id()),
            (ct.len(), level, ct.key_id())
        );
        assert!(back.seed().is_none());
        assert_eq!(back.to_bytes(ctx).unwrap(), full);
        assert_eq!(
            dec.decrypt_decode(&back).unwrap(),
            dec.decrypt_decode(ct).unwrap()
        );
        assert_eq!(ct.is_compressible(), compressible);
        if compressible {
            let comp = ct.to_bytes_compressed(ctx).unwrap();
            assert!(inspect(&comp).unwrap().seed_compressed);
            assert_eq!(
                comp.len(),
                framed((CKKS_PREFIX_LEN + SEED_LEN) as u64 + bits.div_ceil(8))
            );
            assert!(comp.len() < full.len() * 55 / 100);
            let back = Ciphertext::from_bytes(ctx, &comp).unwrap();
            assert_eq!(&back, ct);
            assert_eq!(back.to_bytes_compressed(ctx).unwrap(), comp);
            assert_eq!(ct.to_bytes_smallest(ctx).unwrap(), comp);
        } else {
            assert_eq!(
                fmt_err(ct.to_bytes_compressed(ctx)),
                FormatError::NotCompressible {
                    kind: ObjectKind::CkksCiphertext
                }
            );
            assert_eq!(ct.to_bytes_smallest(ctx).unwrap(), full);
        }
    }
    // An evaluated ciphertext that kept no valid seed is not compressible.
    let ev = Evaluator::new(ctx);
    let sum = ev.add(&f.ct_sk, &f.ct_sk).unwrap();
    if sum.seed().is_some() {
        assert!(sum.to_bytes_compressed(ctx).is_err());
    }
}

// ------------------------------------------------------- wrong contexts

#[test]
fn objects_of_another_context_are_rejected() {
    let f = fixture();
    let g = ckks_fixture(ckks_params_dnum2(), 4);
    let bfv = BfvContext::new(ser_common::params(None)).unwrap();
    let ctx = &f.ctx;
    let mismatch = |r: rnsfhe::Result<()>| {
        assert!(matches!(r, Err(Error::ParameterMismatch { .. })), "{r:?}");
    };
    let ct = f.ct_pk.to_bytes(ctx).unwrap();
    mismatch(Ciphertext::from_bytes(&g.ctx, &ct).map(drop));
    mismatch(Ciphertext::from_bytes(&g.ctx, &f.ct_sk.to_bytes_compressed(ctx).unwrap()).map(drop));
    mismatch(Plaintext::from_bytes(&g.ctx, &f.pt.to_bytes(ctx).unwrap()).map(drop));
    for b in [
        f.sk.to_bytes(ctx).unwrap(),
        f.pk.to_bytes(ctx).unwrap(),
        f.rk.to_bytes(ctx).unwrap(),
        f.gk.to_bytes_compressed(ctx).unwrap(),
    ] {
        // Into another CKKS context and into a BFV context.
        let kind = inspect(&b).unwrap().kind;
        let into_ckks: rnsfhe::Result<()> = match kind {
            ObjectKind::SecretKey => SecretKey::from_bytes(&g.ctx, &b).map(drop),
            ObjectKind::PublicKey => PublicKey::from_bytes(&g.ctx, &b).map(drop),
            ObjectKind::RelinKey => RelinKey::from_bytes(&g.ctx, &b).map(drop),
            _ => GaloisKeys::from_bytes(&g.ctx, &b).map(drop),
        };
        mismatch(into_ckks);
        let into_bfv: rnsfhe::Result<()> = match kind {
            ObjectKind::SecretKey => SecretKey::from_bytes(&bfv, &b).map(drop),
            ObjectKind::PublicKey => PublicKey::from_bytes(&bfv, &b).map(drop),
            ObjectKind::RelinKey => RelinKey::from_bytes(&bfv, &b).map(drop),
            _ => GaloisKeys::from_bytes(&bfv, &b).map(drop),
        };
        mismatch(into_bfv);
    }
    // BFV keys do not load into a CKKS context.
    let bf = ser_common::fixture(None, 5);
    mismatch(RelinKey::from_bytes(ctx, &bf.rk.to_bytes(&bf.ctx).unwrap()).map(drop));
    mismatch(SecretKey::from_bytes(ctx, &bf.sk.to_bytes(&bf.ctx).unwrap()).map(drop));
    // Objects of one context are not written with another.
    mismatch(f.ct_pk.to_bytes(&g.ctx).map(drop));
    mismatch(f.rk.to_bytes(&g.ctx).map(drop));
    mismatch(f.sk.to_bytes(&bfv).map(drop));
    // A BFV ciphertext is not a CKKS one, and vice versa.
    assert_eq!(
        fmt_err(Ciphertext::from_bytes(
            ctx,
            &bf.ct_pk.to_bytes(&bf.ctx).unwrap()
        )),
        FormatError::WrongKind {
            expected: ObjectKind::CkksCiphertext,
            found: ObjectKind::Ciphertext
        }
    );
    assert_eq!(
        fmt_err(rnsfhe::bfv::Ciphertext::from_bytes(&bf.ctx, &ct)),
        FormatError::WrongKind {
            expected: ObjectKind::Ciphertext,
            found: ObjectKind::CkksCiphertext
        }
    );
}

// ------------------------------------------------------------ load errors

/// Every CKKS loader (and the key loaders under a CKKS context) on `b`.
fn load_any(ctx: &Arc<CkksContext>, kind: ObjectKind, b: &[u8]) -> rnsfhe::Result<()> {
    match kind {
        ObjectKind::CkksParameters => CkksParameters::from_bytes(b).map(drop),
        ObjectKind::CkksPlaintext => Plaintext::from_bytes(ctx, b).map(drop),
        ObjectKind::CkksCiphertext => Ciphertext::from_bytes(ctx, b).map(drop),
        ObjectKind::SecretKey => SecretKey::from_bytes(ctx, b).map(drop),
        ObjectKind::PublicKey => PublicKey::from_bytes(ctx, b).map(drop),
        ObjectKind::RelinKey => RelinKey::from_bytes(ctx, b).map(drop),
        ObjectKind::GaloisKeys => GaloisKeys::from_bytes(ctx, b).map(drop),
        other => panic!("not a CKKS loader: {other}"),
    }
}

#[test]
fn truncation_flips_trailing_bytes_and_wrong_kinds() {
    let f = fixture();
    let ctx = &f.ctx;
    let kinds = [
        ObjectKind::CkksParameters,
        ObjectKind::CkksPlaintext,
        ObjectKind::CkksCiphertext,
        ObjectKind::SecretKey,
        ObjectKind::PublicKey,
        ObjectKind::RelinKey,
        ObjectKind::GaloisKeys,
    ];
    for b in f.objects() {
        let kind = inspect(&b).unwrap().kind;
        load_any(ctx, kind, &b).unwrap();
        // Truncated anywhere, including inside the header.
        for cut in [
            0,
            3,
            20,
            HEADER_LEN + CHECKSUM_LEN - 1,
            b.len() / 2,
            b.len() - 1,
        ] {
            let e = fmt_err(load_any(ctx, kind, &b[..cut]));
            assert!(
                matches!(
                    e,
                    FormatError::Truncated { .. } | FormatError::BadMagic { .. }
                ),
                "{kind} cut at {cut}: {e:?}"
            );
        }
        // Trailing bytes.
        let mut t = b.clone();
        t.push(0);
        assert_format_err!(load_any(ctx, kind, &t), FormatError::TrailingBytes { .. });
        // A flipped bit in the payload or the header: checksum.
        for at in [HEADER_LEN, b.len() - CHECKSUM_LEN - 1, 9] {
            let mut x = b.clone();
            x[at] ^= 0x10;
            assert_format_err!(
                load_any(ctx, kind, &x),
                FormatError::ChecksumMismatch { .. }
            );
        }
        // Every other loader: wrong kind (or a secret key where a public
        // object belongs).
        for other in kinds.iter().copied().filter(|&k| k != kind) {
            let e = fmt_err(load_any(ctx, other, &b));
            if kind == ObjectKind::SecretKey {
                assert_eq!(e, FormatError::UnexpectedSecret { expected: other });
            } else {
                assert_eq!(
                    e,
                    FormatError::WrongKind {
                        expected: other,
                        found: kind
                    }
                );
            }
        }
    }
}

/// `good` with its header count set to each of `counts`: `T`'s loader
/// names an invalid count of `what`.
fn assert_invalid_counts<T: FromBytes<CkksContext> + std::fmt::Debug>(
    ctx: &Arc<CkksContext>,
    good: &[u8],
    counts: &[u32],
    what: &str,
) {
    for &count in counts {
        let e = fmt_err(T::from_bytes(ctx, &with_u32(good, 24, count)));
        assert!(
            matches!(e, FormatError::InvalidCount { what: w, .. } if w == what),
            "count {count}: {e:?}"
        );
    }
}

/// Patches the payload (the CKKS prefix of a plaintext or ciphertext, a
/// field of the parameters) at `at`, with reseal.
fn patch(b: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut x = b.to_vec();
    x[HEADER_LEN + at..HEADER_LEN + at + bytes.len()].copy_from_slice(bytes);
    reseal(&mut x);
    x
}

#[test]
fn prefix_fields_are_checked() {
    let f = fixture();
    let ctx = &f.ctx;
    // Plaintexts carry no key id.
    let x = with_byte(&f.pt.to_bytes(ctx).unwrap(), 16, 1);
    assert_format_err!(
        Plaintext::from_bytes(ctx, &x),
        FormatError::NonZeroReserved { .. }
    );
    for (kind, b) in [
        (ObjectKind::CkksPlaintext, f.pt.to_bytes(ctx).unwrap()),
        (ObjectKind::CkksCiphertext, f.ct_pk.to_bytes(ctx).unwrap()),
        (
            ObjectKind::CkksCiphertext,
            f.ct_sk.to_bytes_compressed(ctx).unwrap(),
        ),
    ] {
        // Scale: NaN, infinite, below 1, negative.
        for bad in [f64::NAN, f64::INFINITY, 0.5, -(2f64.powi(24)), 0.0] {
            let x = patch(&b, 0, &bad.to_bits().to_le_bytes());
            assert!(
                matches!(
                    fmt_err(load_any(ctx, kind, &x)),
                    FormatError::InvalidField { field: "scale", .. }
                ),
                "{bad}"
            );
        }
        // A different valid scale is a different valid object.
        let x = patch(&b, 0, &1.0f64.to_bits().to_le_bytes());
        load_any(ctx, kind, &x).unwrap();
        // More values than slots.
        let x = patch(&b, 8, &(ctx.slots() as u64 + 1).to_le_bytes());
        assert_eq!(
            fmt_err(load_any(ctx, kind, &x)),
            FormatError::InvalidCount {
                what: "encoded value count",
                found: ctx.slots() as u64 + 1,
                min: 0,
                max: ctx.slots() as u64
            }
        );
        // Limb counts outside the chain.
        for limbs in [0u32, 4, u32::MAX] {
            let x = patch(&b, 16, &limbs.to_le_bytes());
            assert_eq!(
                fmt_err(load_any(ctx, kind, &x)),
                FormatError::InvalidCount {
                    what: "limb count (level + 1)",
                    found: u64::from(limbs),
                    min: 1,
                    max: 3
                }
            );
        }
        // A lower level inside the chain: the payload is then too long.
        let x = patch(&b, 16, &2u32.to_le_bytes());
        assert_format_err!(load_any(ctx, kind, &x), FormatError::PayloadLength { .. });
        // Reserved word.
        let x = patch(&b, 20, &1u32.to_le_bytes());
        assert_format_err!(load_any(ctx, kind, &x), FormatError::NonZeroReserved { .. });
        // A residue ≥ q_0 at the first coefficient.
        let start = if inspect(&b).unwrap().seed_compressed {
            CKKS_PREFIX_LEN + SEED_LEN
        } else {
            CKKS_PREFIX_LEN
        };
        let q0 = ctx.params().coeff_moduli()[0];
        let w = 64 - (q0 - 1).leading_zeros();
        let mut x = b.clone();
        poke_bits(&mut x, start, 0, w, q0);
        reseal(&mut x);
        assert_eq!(
            fmt_err(load_any(ctx, kind, &x)),
            FormatError::ResidueOutOfRange {
                poly: 0,
                limb: 0,
                index: 0,
                value: q0,
                modulus: q0
            }
        );
        // A payload shorter than the prefix.
        let mut x = b[..HEADER_LEN + 10].to_vec();
        x[32..40].copy_from_slice(&10u64.to_le_bytes());
        x.extend_from_slice(&[0; CHECKSUM_LEN]);
        reseal(&mut x);
        assert_format_err!(load_any(ctx, kind, &x), FormatError::PayloadLength { .. });
    }
}

#[test]
fn ciphertext_sizes_and_flags_are_checked() {
    let f = fixture();
    let ctx = &f.ctx;
    let load = |b: &[u8]| Ciphertext::from_bytes(ctx, b);
    let full = f.ct_pk.to_bytes(ctx).unwrap();
    let comp = f.ct_sk.to_bytes_compressed(ctx).unwrap();
    assert_invalid_counts::<Ciphertext>(ctx, &full, &[0, 1, 4, 16, u32::MAX], "ciphertext size");
    // Size 3 with the payload of size 2.
    assert_format_err!(
        load(&with_u32(&full, 24, 3)),
        FormatError::PayloadLength { .. }
    );
    // Compressed objects have size 2.
    assert_invalid_counts::<Ciphertext>(ctx, &comp, &[3], "compressed ciphertext size");
    // The secret flag on a ciphertext; unknown flags; the compressed flag
    // on a plaintext.
    for (b, flags) in [
        (&full, 0b01u8),
        (&full, 0b100),
        (&f.pt.to_bytes(ctx).unwrap(), 0b10),
    ] {
        let x = with_byte(b, 7, flags);
        let e = if x[6] == ObjectKind::CkksPlaintext.code() {
            fmt_err(Plaintext::from_bytes(ctx, &x))
        } else {
            fmt_err(load(&x))
        };
        assert!(matches!(e, FormatError::InvalidFlags { .. }), "{e:?}");
    }
    // The compressed flag toggled: the length no longer matches.
    assert_format_err!(
        load(&with_byte(&full, 7, 0b10)),
        FormatError::PayloadLength { .. }
    );
}

#[test]
fn parameter_fields_are_checked() {
    let p = ckks_params();
    let b = p.to_bytes().unwrap();
    let field = |at: usize, v: &[u8]| {
        let mut x = b.clone();
        x[HEADER_LEN + at..HEADER_LEN + at + v.len()].copy_from_slice(v);
        reseal(&mut x);
        CkksParameters::from_bytes(&x)
    };
    // σ NaN, a degree that is not a power of two, a scale above q_0.
    assert_err!(
        field(8, &f64::NAN.to_bits().to_le_bytes()),
        Error::InvalidParameters(_)
    );
    assert_err!(
        field(0, &4000u64.to_le_bytes()),
        Error::InvalidParameters(_)
    );
    assert_err!(field(24, &40u16.to_le_bytes()), Error::InvalidParameters(_));
    // Unknown security level; reserved word.
    assert_format_err!(
        field(26, &100u16.to_le_bytes()),
        FormatError::InvalidField {
            field: "security",
            ..
        }
    );
    assert_format_err!(
        field(28, &1u32.to_le_bytes()),
        FormatError::NonZeroReserved { .. }
    );
    // dnum outside [1, k].
    assert_err!(field(16, &0u32.to_le_bytes()), Error::InvalidParameters(_));
    assert_err!(field(16, &4u32.to_le_bytes()), Error::InvalidParameters(_));
    // A valid but different dnum (digits of 2 limbs need a larger P): not
    // these parameters.
    assert!(field(16, &2u32.to_le_bytes()).is_err());
    // 192-bit security for a 108-bit Q·P at n = 4096: insecure.
    assert_err!(
        field(26, &192u16.to_le_bytes()),
        Error::InsecureParameters { .. }
    );
    // Opting out of the check changes no id: the recorded level is
    // honoured as it is.
    let x = CkksParameters::from_bytes(&patch(&b, 26, &0u16.to_le_bytes())).unwrap();
    assert_eq!(x.security_level(), SecurityLevel::None);
    // A different scale is a different valid parameter set with the same id.
    let x = CkksParameters::from_bytes(&patch(&b, 24, &20u16.to_le_bytes())).unwrap();
    assert_eq!(x.scale_bits(), 20);
    // A prime changed: the id no longer matches (or the prime is invalid).
    let mut x = b.clone();
    let all: Vec<u64> = p
        .coeff_moduli()
        .iter()
        .chain(p.key_switching_moduli())
        .copied()
        .collect();
    let other = rnsfhe::rnsfhe_math::prime::generate_ntt_primes(30, 4096, 1, &all).unwrap()[0];
    x[HEADER_LEN + 32..HEADER_LEN + 40].copy_from_slice(&other.to_le_bytes());
    reseal(&mut x);
    assert_format_err!(
        CkksParameters::from_bytes(&x),
        FormatError::ParamsIdMismatch { .. }
    );
    // Counts: no chain prime, no special prime, too many.
    for (at, v) in [
        (24usize, 0u32),
        (24, 65),
        (HEADER_LEN + 20, 0),
        (HEADER_LEN + 20, 65),
    ] {
        let x = with_u32(&b, at, v);
        assert_format_err!(
            CkksParameters::from_bytes(&x),
            FormatError::InvalidCount { .. }
        );
    }
    // One special prime more than the payload holds.
    let x = with_u32(&b, HEADER_LEN + 20, 2);
    assert_format_err!(
        CkksParameters::from_bytes(&x),
        FormatError::PayloadLength { .. }
    );
}

#[test]
fn hybrid_key_pair_counts_are_checked() {
    let f = fixture();
    let ctx = &f.ctx;
    let rk = f.rk.to_bytes(ctx).unwrap();
    assert_invalid_counts::<RelinKey>(ctx, &rk, &[0, 1, 2, 4, u32::MAX], "key pairs");
    // A residue of a special-prime limb ≥ p_1: limb k of the first pair.
    let k = ctx.params().coeff_moduli().len();
    let p1 = ctx.params().key_switching_moduli()[0];
    let n = ctx.degree() as u64;
    let widths: u64 = ctx
        .params()
        .coeff_moduli()
        .iter()
        .map(|&q| u64::from(64 - (q - 1).leading_zeros()))
        .sum();
    let w = 64 - (p1 - 1).leading_zeros();
    let mut x = rk.clone();
    poke_bits(&mut x, 0, n * widths + 5 * u64::from(w), w, p1);
    reseal(&mut x);
    assert_eq!(
        fmt_err(RelinKey::from_bytes(ctx, &x)),
        FormatError::ResidueOutOfRange {
            poly: 0,
            limb: k,
            index: 5,
            value: p1,
            modulus: p1
        }
    );
}
