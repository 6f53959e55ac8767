//! The masking key from Secrets Manager on moto, as recon-hash reads the template's
//! secret: its tokens are the key's, and a missing, empty or short secret is an error
//! naming the secret.

use glue_recon::aws::secrets::mask_key;
use glue_recon::mask::MaskKey;

use super::moto;

#[tokio::test(flavor = "multi_thread")]
async fn the_secret_is_the_key_of_the_tokens() {
    let conf = moto::sdk_config().await;
    let arn = moto::mask_secret(&conf).await;
    let key = mask_key(&conf, &arn).await.unwrap();
    let same = MaskKey::new(moto::MASK_SECRET.as_bytes(), "test").unwrap();
    let other = MaskKey::new(b"another deployment, another key", "test").unwrap();
    assert_eq!(
        key.token(b"\x01alice@example.com"),
        same.token(b"\x01alice@example.com")
    );
    assert_ne!(
        key.token(b"\x01alice@example.com"),
        other.token(b"\x01alice@example.com")
    );

    // A binary secret holds the key as bytes.
    let client = aws_sdk_secretsmanager::Client::new(&conf);
    let bytes: Vec<u8> = (0u8..32).collect();
    let binary = client
        .create_secret()
        .name(moto::unique("mask-binary"))
        .secret_binary(aws_sdk_secretsmanager::primitives::Blob::new(bytes.clone()))
        .send()
        .await
        .unwrap();
    let from_binary = mask_key(&conf, binary.arn().unwrap()).await.unwrap();
    assert_eq!(
        from_binary.token(b"x"),
        MaskKey::new(&bytes, "test").unwrap().token(b"x")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_short_secret_is_an_error_naming_it() {
    let conf = moto::sdk_config().await;
    let missing = format!(
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:{}",
        moto::unique("none")
    );
    let err = mask_key(&conf, &missing).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidConfig", "{err}");
    let text = err.to_string();
    assert!(
        text.contains("RECON_MASK_KEY_SECRET") && text.contains(&missing),
        "{text}"
    );

    let short = aws_sdk_secretsmanager::Client::new(&conf)
        .create_secret()
        .name(moto::unique("mask-short"))
        .secret_string("short")
        .send()
        .await
        .unwrap();
    let arn = short.arn().unwrap();
    let text = mask_key(&conf, arn).await.unwrap_err().to_string();
    assert!(text.contains(arn) && text.contains("at least 16"), "{text}");
}
