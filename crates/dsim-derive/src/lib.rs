//! `#[derive(Params)]`: each parameter of a mechanism declared once.
//!
//! A mechanism's configuration is a plain struct that serde reads from a scenario file. Its
//! fields already say the key (the field, or serde's `rename`), the unit (the field's type:
//! `Rate`, `Bytes`, `Duration`, ...), whether it is required and its default (serde's
//! `default`), and the help (the doc comment). `#[param(...)]` adds what serde does not know:
//!
//! - `range = "(0, 1]"`: the values allowed, bounds written in the field's unit
//!   (`"(0bps, 100Gbps]"`, `"[1, inf)"`); checked by `Params::check`;
//! - `nonempty`: a list or a text that must not be empty;
//! - `section = "5.1"`: the section of the mechanism's document the key comes from;
//!
//! and on the struct, `#[param(document = "RFC 2697")]`. From this one declaration the
//! derive writes `Params::table()` (the key table the schema export, the Python builders
//! and the documentation are made from) and `Params::check()` (every range and rule above,
//! with the key path, the value and the rule in the error). On a fieldless enum it writes
//! `Value` (the names serde accepts, after `rename_all` and `rename`).
//!
//! The generated code names `crate::params`: the derive is for dsim-core's own types.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Data, DeriveInput, Expr, ExprLit, Fields, Lit, Meta, Token, parse_macro_input};

#[proc_macro_derive(Params, attributes(param))]
pub fn derive_params(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let out = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(fields) => table(&input, fields.named.iter().collect()),
            _ => Err(syn::Error::new_spanned(&input.ident, "Params needs named fields")),
        },
        Data::Enum(e) => choice(&input, e),
        Data::Union(_) => Err(syn::Error::new_spanned(&input.ident, "Params does not apply to unions")),
    };
    out.unwrap_or_else(syn::Error::into_compile_error).into()
}

/// `key = "value"` and bare `flag` items of `#[name(...)]` attributes.
#[derive(Default)]
struct Items {
    pairs: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Items {
    fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    fn all(&self, key: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }
    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

fn items(attrs: &[Attribute], name: &str) -> syn::Result<Items> {
    let mut out = Items::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        let Meta::List(list) = &attr.meta else { continue };
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(list.tokens.clone())?;
        for meta in metas {
            match meta {
                Meta::Path(p) => out.flags.push(ident_of(&p)),
                Meta::NameValue(nv) => {
                    let key = ident_of(&nv.path);
                    match &nv.value {
                        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => out.pairs.push((key, s.value())),
                        // serde's own items with other values (e.g. `bound(...)`) are not ours.
                        _ if name == "serde" => {}
                        other => return Err(syn::Error::new_spanned(other, "expected a string literal")),
                    }
                }
                Meta::List(_) if name == "serde" => {}
                Meta::List(l) => return Err(syn::Error::new_spanned(l, "unexpected list")),
            }
        }
    }
    Ok(out)
}

fn ident_of(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The doc comment: lines without their leading space, paragraphs kept.
fn doc(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').unwrap_or(&l).trim_end().to_string())
        .collect();
    lines.join("\n").trim().to_string()
}

fn opt(s: Option<&str>) -> Tokens {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// A range "(lo, hi]" split into its bounds; "inf" (or nothing) is no bound.
fn range(text: &str, span: &syn::Field) -> syn::Result<Tokens> {
    let bad = || syn::Error::new_spanned(span, format!("a range reads \"(lo, hi]\", \"[lo, inf)\": {text:?}"));
    let t = text.trim();
    let (open, close) = (t.chars().next().ok_or_else(bad)?, t.chars().last().ok_or_else(bad)?);
    if !matches!(open, '(' | '[') || !matches!(close, ')' | ']') {
        return Err(bad());
    }
    let (lo, hi) = t[1..t.len() - 1].split_once(',').ok_or_else(bad)?;
    let bound = |b: &str| {
        let b = b.trim();
        opt((!b.is_empty() && b != "inf" && b != "-inf").then_some(b))
    };
    let (lo, hi) = (bound(lo), bound(hi));
    let (lo_incl, hi_incl) = (open == '[', close == ']');
    Ok(quote!(crate::params::Range { text: #t, lo: #lo, lo_incl: #lo_incl, hi: #hi, hi_incl: #hi_incl }))
}

fn table(input: &DeriveInput, fields: Vec<&syn::Field>) -> syn::Result<Tokens> {
    let name = &input.ident;
    let table_doc = doc(&input.attrs);
    let serde_container = items(&input.attrs, "serde")?;
    let param_container = items(&input.attrs, "param")?;
    let document = opt(param_container.get("document"));
    let container_default = serde_container.has("default");
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    let mut keys = Vec::new();
    let mut checks = Vec::new();
    for f in fields {
        let serde = items(&f.attrs, "serde")?;
        if serde.has("skip") || serde.has("skip_deserializing") {
            continue;
        }
        let param = items(&f.attrs, "param")?;
        let ident = f.ident.as_ref().expect("named field");
        let ty = &f.ty;
        let key = serde.get("rename").map_or_else(|| ident.to_string(), str::to_string);
        let aliases = serde.all("alias");
        let help = doc(&f.attrs);
        let section = opt(param.get("section"));
        let nonempty = param.has("nonempty");
        let default_expr: Option<Tokens> = if let Some(path) = serde.get("default") {
            let path: syn::ExprPath = syn::parse_str(path)?;
            Some(quote!(#path()))
        } else if serde.has("default") {
            Some(quote!(<#ty as ::core::default::Default>::default()))
        } else if container_default {
            Some(quote!(<Self as ::core::default::Default>::default().#ident))
        } else {
            None
        };
        // serde reads a missing `Option` key as None without being told.
        let required = default_expr.is_none() && !is_option(ty);
        let default = match &default_expr {
            Some(e) => quote!(crate::params::render_default(&#e)),
            None => quote!(::core::option::Option::None),
        };
        let range_tokens = match param.get("range") {
            Some(r) => {
                let r = range(r, f)?;
                // The rule cites where it comes from: "(RFC 2963 section 2.3)".
                let cite = match (param_container.get("document"), param.get("section")) {
                    (Some(d), Some(s)) => quote!(::core::option::Option::Some(concat!(#d, " section ", #s))),
                    (None, Some(s)) => quote!(::core::option::Option::Some(concat!("section ", #s))),
                    _ => quote!(::core::option::Option::None),
                };
                checks.push(quote! {
                    crate::params::check_range(&self.#ident, &#r, &path.key(#key), #cite)?;
                });
                let t = param.get("range").unwrap_or_default();
                quote!(::core::option::Option::Some(#t))
            }
            None => quote!(::core::option::Option::None),
        };
        if nonempty {
            checks.push(quote! {
                crate::params::check_nonempty(&self.#ident, &path.key(#key))?;
            });
        }
        checks.push(quote! {
            <#ty as crate::params::Value>::check_nested(&self.#ident, &path.key(#key))?;
        });
        keys.push(quote! {
            crate::params::Key {
                key: #key,
                aliases: &[#(#aliases),*],
                kind: <#ty as crate::params::Value>::kind(),
                required: #required,
                default: #default,
                range: #range_tokens,
                nonempty: #nonempty,
                help: #help,
                section: #section,
            }
        });
    }
    Ok(quote! {
        impl #impl_generics crate::params::Params for #name #ty_generics #where_clause {
            fn table() -> crate::params::Table {
                crate::params::Table {
                    name: crate::params::type_name::<Self>(),
                    doc: #table_doc,
                    document: #document,
                    keys: ::std::vec![#(#keys),*],
                }
            }

            fn check(&self, path: &crate::params::KeyPath) -> ::core::result::Result<(), crate::params::ConfigError> {
                let _ = path;
                #(#checks)*
                ::core::result::Result::Ok(())
            }
        }

        impl #impl_generics crate::params::Value for #name #ty_generics #where_clause {
            fn kind() -> crate::params::Kind {
                crate::params::Kind::Table(<Self as crate::params::Params>::table)
            }
            fn check_nested(&self, path: &crate::params::KeyPath) -> ::core::result::Result<(), crate::params::ConfigError> {
                <Self as crate::params::Params>::check(self, path)
            }
        }
    })
}

/// A fieldless enum: the names serde reads.
fn choice(input: &DeriveInput, e: &syn::DataEnum) -> syn::Result<Tokens> {
    let name = &input.ident;
    let rename_all = items(&input.attrs, "serde")?.get("rename_all").map(str::to_string);
    let mut names = Vec::new();
    for v in &e.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(v, "Params on an enum needs fieldless variants"));
        }
        let serde = items(&v.attrs, "serde")?;
        let written = match (serde.get("rename"), rename_all.as_deref()) {
            (Some(r), _) => r.to_string(),
            (None, Some("lowercase")) => v.ident.to_string().to_lowercase(),
            (None, Some("snake_case")) => snake_case(&v.ident.to_string()),
            (None, None) => v.ident.to_string(),
            (None, Some(other)) => {
                return Err(syn::Error::new_spanned(
                    name,
                    format!("rename_all = {other:?} is not supported"),
                ));
            }
        };
        names.push(written);
    }
    Ok(quote! {
        impl crate::params::Value for #name {
            fn kind() -> crate::params::Kind {
                crate::params::Kind::Choice(&[#(#names),*])
            }
        }
    })
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}
