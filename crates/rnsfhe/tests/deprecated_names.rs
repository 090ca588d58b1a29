//! The names replaced by one name per idea still work for one release and
//! mean exactly what the new names mean: the key-switching method
//! (`RelinMethod` → `KeySwitchingMethod`, `relin_method` →
//! `key_switching_method`) and the key-switching primes (`special_moduli`
//! → `key_switching_moduli`).

#![allow(deprecated)]

mod common;

use rnsfhe::bfv::{KeySwitchingMethod, RelinMethod};
use rnsfhe::SecurityLevel;

#[test]
fn old_and_new_bfv_names_build_the_same_parameters() {
    let b = || common::bfv_builder(4096, 65537, &[40, 40, 40]);
    let new = b()
        .key_switching_method(KeySwitchingMethod::Hybrid { dnum: 2 })
        .key_switching_moduli_bits(&[50, 50])
        .build()
        .unwrap();
    let old = b()
        .relin_method(RelinMethod::Hybrid { dnum: 2 })
        .special_moduli_bits(&[50, 50])
        .build()
        .unwrap();
    assert_eq!(old.id(), new.id());
    assert_eq!(old.relin_method(), new.key_switching_method());
    assert_eq!(old.special_moduli(), new.key_switching_moduli());
    assert_eq!(new.key_switching_moduli().len(), 2);
    let explicit = b()
        .coeff_moduli(new.coeff_moduli())
        .relin_method(RelinMethod::Hybrid { dnum: 2 })
        .special_moduli(new.key_switching_moduli())
        .build()
        .unwrap();
    assert_eq!(explicit.id(), new.id());
    assert_eq!(
        rnsfhe::bfv::parameters::fastest_relin_method(
            4096,
            new.coeff_moduli(),
            SecurityLevel::None
        ),
        rnsfhe::bfv::parameters::fastest_key_switching_method(
            4096,
            new.coeff_moduli(),
            SecurityLevel::None
        )
    );
}

#[test]
fn old_and_new_chain_names_build_the_same_parameters() {
    let b = || common::ckks_builder(2, 12);
    let new = b().key_switching_moduli_bits(&[50, 50]).build().unwrap();
    let old = b().special_moduli_bits(&[50, 50]).build().unwrap();
    assert_eq!(old, new);
    assert_eq!(old.special_moduli(), new.key_switching_moduli());
    let explicit = b()
        .special_moduli(new.key_switching_moduli())
        .build()
        .unwrap();
    assert_eq!(explicit.id(), new.id());
}
