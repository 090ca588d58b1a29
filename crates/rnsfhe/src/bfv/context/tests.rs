use super::*;

#[test]
fn auxiliary_bases_satisfy_their_bounds() {
    for (bits, t) in [
        (vec![30u32, 30, 30, 30], 2u64),
        (vec![60, 60], 65537),
        (vec![60; 6], (1 << 59) + 1),
    ] {
        let params = BfvParameters::builder()
            .security(crate::SecurityLevel::None)
            .degree(4096)
            .plain_modulus(t)
            .coeff_moduli_bits(&bits)
            .build()
            .unwrap();
        let ctx = BfvContext::new(params).unwrap();
        let log_q = ctx.params().log2_q();
        let log_t = (t as f64).log2();
        // HPS: P > t·n·q.
        assert!(ctx.hps_base_p().log2_product() >= log_q + 12.0 + log_t + 2.0);
        // BEHZ: λ·M > n·t·q(1+ρ)² with λ = ⌊m_sk/8⌋ (002 Proposition 2).
        let bsk = ctx.behz_base_bsk();
        let m_sk = ctx.behz_m_sk();
        assert_eq!(bsk.values().last().copied(), Some(m_sk));
        let log_m = bsk.log2_product() - (m_sk as f64).log2();
        assert!(log_m + ((m_sk / 8) as f64).log2() > log_q + 12.0 + log_t + 1.0);
        assert!(ctx.behz_rho() < 1e-8);
        // All auxiliary primes differ from q.
        for p in bsk.values().iter().chain(ctx.hps_base_p().values().iter()) {
            assert!(!ctx.params().coeff_moduli().contains(p));
        }
    }
}
